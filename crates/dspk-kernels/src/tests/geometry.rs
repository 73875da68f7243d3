//! Launch geometry from given limits: cube counts, spreading over x/y/z, and refusals.

use super::*;

fn limits(max: (u32, u32, u32), units: u32, plane: u32) -> GridLimits {
    GridLimits {
        max_cube_count: max,
        max_units_per_cube: units,
        plane_size: plane,
    }
}

const GPU: GridLimits = GridLimits {
    max_cube_count: (65_535, 65_535, 65_535),
    max_units_per_cube: 1024,
    plane_size: 32,
};

#[test]
fn elementwise_covers_every_element_with_whole_cubes() {
    for n in [1usize, 7, 255, 256, 257, 30_000 * 384] {
        let g = LaunchGeometry::elementwise_with(&GPU, n).unwrap();
        assert_eq!(g.units_per_cube(), 256);
        assert_eq!(g.cubes(), n.div_ceil(256) as u64, "n = {n}");
        assert!(g.launched_cubes() >= g.cubes());
        assert!(g.launched_cubes() * 256 >= n as u64);
        assert!(!g.contiguous_runs());
    }
}

#[test]
fn a_large_problem_spreads_over_y_and_z_and_bounds_the_overshoot() {
    // 450 000 cubes failed along x alone on the H200.
    let n = 450_000usize * 256;
    let g = LaunchGeometry::elementwise_with(&GPU, n).unwrap();
    let (x, y, z) = g.count_xyz();
    assert_eq!(x, 65_535);
    assert_eq!(y, 450_000u32.div_ceil(65_535));
    assert_eq!(z, 1);
    assert!(g.launched_cubes() >= 450_000);
    // Spare cubes are fewer than one row of x.
    assert!(g.launched_cubes() - g.cubes() < u64::from(x));

    let small = limits((4, 3, 2), 256, 32);
    let g = LaunchGeometry::elementwise_with(&small, 256 * 20).unwrap();
    assert_eq!(g.count_xyz(), (4, 3, 2));
    assert_eq!(g.cubes(), 20);
}

#[test]
fn a_problem_larger_than_the_grid_is_an_error_not_a_panic() {
    let small = limits((4, 3, 2), 256, 32);
    let err = LaunchGeometry::elementwise_with(&small, 256 * 24 + 1).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("25 cubes"), "{text}");
    assert!(text.contains("4 × 3 × 2"), "{text}");
    // Exactly the grid is fine.
    assert!(LaunchGeometry::elementwise_with(&small, 256 * 24).is_ok());
    // More than 32-bit indexing allows.
    let err = LaunchGeometry::per_row_with(&GPU, 1 << 20, 1 << 13).unwrap_err();
    assert!(err.to_string().contains("32 bits"), "{err}");
}

#[test]
fn channels_samples_gives_each_channel_whole_cubes() {
    let g = LaunchGeometry::channels_samples_with(&GPU, 385, 30_001).unwrap();
    assert_eq!(g.cubes(), 385 * 30_001u64.div_ceil(256));
    let g = LaunchGeometry::channels_samples_with(&GPU, 3, 1).unwrap();
    assert_eq!(g.cubes(), 3);
}

#[test]
fn per_row_and_per_sample() {
    let g = LaunchGeometry::per_row_with(&GPU, 1000, 1024).unwrap();
    assert_eq!(g.cubes(), 1000);
    let g = LaunchGeometry::per_sample_with(&GPU, 1000).unwrap();
    assert_eq!(g.cubes(), 4);
}

#[test]
fn units_follow_the_device_and_one_unit_planes_take_runs() {
    let cpu = limits((65_535, 65_535, 65_535), 6, 1);
    let g = LaunchGeometry::elementwise_with(&cpu, 100).unwrap();
    assert_eq!(g.units_per_cube(), 6);
    assert_eq!(g.cubes(), 17);
    assert!(g.contiguous_runs());
    let zero = limits((65_535, 65_535, 65_535), 0, 0);
    assert_eq!(
        LaunchGeometry::elementwise_with(&zero, 10)
            .unwrap()
            .units_per_cube(),
        1
    );
}

#[test]
fn an_empty_problem_launches_nothing() {
    let g = LaunchGeometry::elementwise_with(&GPU, 0).unwrap();
    assert!(g.is_empty());
    assert_eq!(g.cubes(), 0);
    assert_eq!(g.launched_cubes(), 0);
}
