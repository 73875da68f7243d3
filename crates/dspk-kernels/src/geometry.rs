//! Launch geometry from the device's own limits, and the `#[cube]` index helpers that read it.

use cubecl::prelude::*;
use dspk_types::{DspError, DspResult};

use crate::limits::MAX_DEVICE_ELEMENTS;

/// Units per cube that dspk kernels ask for when the device allows it (a common plane multiple,
/// and WebGPU's guaranteed minimum of invocations per workgroup).
pub const PREFERRED_UNITS_PER_CUBE: u32 = 256;

/// The part of a device's properties that launch geometry depends on.
///
/// [`GridLimits::of`] reads them from a client; tests and planners can build one by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GridLimits {
    /// Largest cube count along x, y and z.
    pub max_cube_count: (u32, u32, u32),
    /// Largest number of units in one cube.
    pub max_units_per_cube: u32,
    /// The device's largest plane (warp, subgroup); 1 on a runtime that runs one unit per
    /// thread, as the CPU runtime does.
    pub plane_size: u32,
}

impl GridLimits {
    /// The limits of the client's device.
    pub fn of(client: &Client) -> Self {
        let hw = &client.properties().hardware;
        GridLimits {
            max_cube_count: hw.max_cube_count,
            max_units_per_cube: hw.max_units_per_cube,
            plane_size: hw.plane_size_max,
        }
    }

    /// Units per cube dspk kernels use on this device: [`PREFERRED_UNITS_PER_CUBE`], or fewer
    /// where the device allows fewer (at least 1).
    pub fn units_per_cube(&self) -> u32 {
        PREFERRED_UNITS_PER_CUBE.min(self.max_units_per_cube).max(1)
    }

    /// Whether each unit should take a contiguous run of a row rather than every
    /// `CUBE_DIM`-th element: true where units do not run in lock-step planes (plane size 1).
    pub fn contiguous_runs(&self) -> bool {
        self.plane_size <= 1
    }
}

/// How a kernel is launched: the cube count (spread over x, y, z), the units per cube, and
/// how many cubes the problem really needs (the grid may launch a few more; kernels
/// bound-check, see [`element_position()`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchGeometry {
    count: (u32, u32, u32),
    units: u32,
    cubes: u64,
    contiguous: bool,
}

impl LaunchGeometry {
    /// One unit per element of `n` ([`element_position()`] in the kernel).
    pub fn elementwise(client: &Client, n: usize) -> DspResult<Self> {
        Self::elementwise_with(&GridLimits::of(client), n)
    }

    /// [`elementwise`](Self::elementwise) for given limits.
    pub fn elementwise_with(limits: &GridLimits, n: usize) -> DspResult<Self> {
        let units = limits.units_per_cube();
        let cubes = (n as u64).div_ceil(u64::from(units));
        Self::spread(limits, units, cubes, n as u64, "elements")
    }

    /// One unit per sample of each of `channels` rows of `samples`, each cube within one channel
    /// ([`channel_position()`], [`sample_position()`] in the kernel).
    pub fn channels_samples(client: &Client, channels: usize, samples: usize) -> DspResult<Self> {
        Self::channels_samples_with(&GridLimits::of(client), channels, samples)
    }

    /// [`channels_samples`](Self::channels_samples) for given limits.
    pub fn channels_samples_with(
        limits: &GridLimits,
        channels: usize,
        samples: usize,
    ) -> DspResult<Self> {
        let units = limits.units_per_cube();
        let per_channel = (samples as u64).div_ceil(u64::from(units));
        let cubes = per_channel.checked_mul(channels as u64).ok_or_else(|| {
            DspError::Overflow(format!("{channels} channels × {samples} samples"))
        })?;
        let elements = (channels as u64).saturating_mul(samples as u64);
        Self::spread(limits, units, cubes, elements, "channel samples")
    }

    /// One unit per sample (a kernel that walks the channels of one time point,
    /// [`element_position()`] in the kernel).
    pub fn per_sample(client: &Client, samples: usize) -> DspResult<Self> {
        Self::per_sample_with(&GridLimits::of(client), samples)
    }

    /// [`per_sample`](Self::per_sample) for given limits.
    pub fn per_sample_with(limits: &GridLimits, samples: usize) -> DspResult<Self> {
        let units = limits.units_per_cube();
        let cubes = (samples as u64).div_ceil(u64::from(units));
        Self::spread(limits, units, cubes, samples as u64, "samples")
    }

    /// One cube per row of `cols` elements ([`row_position()`] and [`row_share()`] in the kernel).
    pub fn per_row(client: &Client, rows: usize, cols: usize) -> DspResult<Self> {
        Self::per_row_with(&GridLimits::of(client), rows, cols)
    }

    /// [`per_row`](Self::per_row) for given limits.
    pub fn per_row_with(limits: &GridLimits, rows: usize, cols: usize) -> DspResult<Self> {
        let units = limits.units_per_cube();
        let elements = (rows as u64).saturating_mul(cols as u64);
        Self::spread(limits, units, rows as u64, elements, "rows")
    }

    /// `cubes` of `units` units each, spread over the grid's x, y and z.
    fn spread(
        limits: &GridLimits,
        units: u32,
        cubes: u64,
        elements: u64,
        what: &str,
    ) -> DspResult<Self> {
        if elements > MAX_DEVICE_ELEMENTS {
            return Err(DspError::config(format!(
                "a launch over {elements} {what} exceeds the {MAX_DEVICE_ELEMENTS} elements a \
                 kernel can index with 32 bits"
            )));
        }
        let (mx, my, mz) = limits.max_cube_count;
        let (mx, my, mz) = (
            u64::from(mx.max(1)),
            u64::from(my.max(1)),
            u64::from(mz.max(1)),
        );
        let grid_too_small = || {
            DspError::config(format!(
                "a launch over {elements} {what} needs {cubes} cubes of {units} units, more than \
                 this device's grid of {mx} × {my} × {mz} cubes"
            ))
        };
        if cubes == 0 {
            return Ok(LaunchGeometry {
                count: (0, 1, 1),
                units,
                cubes,
                contiguous: limits.contiguous_runs(),
            });
        }
        let x = cubes.min(mx);
        let y = cubes.div_ceil(x).min(my);
        let z = cubes.div_ceil(x * y);
        if z > mz {
            return Err(grid_too_small());
        }
        // Positions are 32-bit in kernels: every launched unit (including the spare ones of a
        // grid that overshoots) must have a position below 2^32.
        let launched_units = x * y * z * u64::from(units);
        if launched_units > u64::from(u32::MAX) + 1 {
            return Err(DspError::config(format!(
                "a launch over {elements} {what} needs {launched_units} units, more than the \
                 2^32 positions a kernel can index with 32 bits"
            )));
        }
        Ok(LaunchGeometry {
            count: (x as u32, y as u32, z as u32),
            units,
            cubes,
            contiguous: limits.contiguous_runs(),
        })
    }

    /// The cube count to launch with.
    pub fn cube_count(&self) -> CubeCount {
        CubeCount::Static(self.count.0, self.count.1, self.count.2)
    }

    /// The cube count along x, y and z.
    pub fn count_xyz(&self) -> (u32, u32, u32) {
        self.count
    }

    /// The cube shape to launch with (1-D).
    pub fn cube_dim(&self) -> CubeDim {
        CubeDim::new_1d(self.units)
    }

    /// Units per cube.
    pub fn units_per_cube(&self) -> u32 {
        self.units
    }

    /// Cubes the problem needs (the grid may launch up to one row of x more).
    pub fn cubes(&self) -> u64 {
        self.cubes
    }

    /// Cubes the grid launches (at least [`cubes`](Self::cubes)).
    pub fn launched_cubes(&self) -> u64 {
        u64::from(self.count.0) * u64::from(self.count.1) * u64::from(self.count.2)
    }

    /// Whether the problem is empty (nothing to launch).
    pub fn is_empty(&self) -> bool {
        self.cubes == 0
    }

    /// Whether units should take contiguous runs of a row ([`row_share()`]'s `contiguous`).
    pub fn contiguous_runs(&self) -> bool {
        self.contiguous
    }
}

pub use cube_helpers::*;

#[expect(
    missing_docs,
    reason = "#[cube] puts an undocumented `mod <name>` of expansion code beside each function, \
              and CubeType an undocumented expansion struct beside RowShare"
)]
mod cube_helpers {
    use cubecl::prelude::*;

    /// The position of this unit among all units of the launch (cube position × units per cube +
    /// unit position). Compare it with the problem size: the grid may launch spare units.
    #[cube]
    pub fn element_position() -> usize {
        CUBE_POS * CUBE_DIM as usize + UNIT_POS as usize
    }

    /// Cubes per channel of a [`LaunchGeometry::channels_samples`](crate::LaunchGeometry::channels_samples) launch over rows of `samples`.
    #[cube]
    fn cubes_per_channel(samples: usize) -> usize {
        let dim = CUBE_DIM as usize;
        samples.div_ceil(dim)
    }

    /// The channel of this unit in a [`LaunchGeometry::channels_samples`](crate::LaunchGeometry::channels_samples) launch over rows of
    /// `samples` (check it against the channel count: spare cubes land past the last channel).
    #[cube]
    pub fn channel_position(samples: usize) -> usize {
        CUBE_POS / cubes_per_channel(samples)
    }

    /// The sample of this unit in a [`LaunchGeometry::channels_samples`](crate::LaunchGeometry::channels_samples) launch over rows of
    /// `samples` (check it against `samples`: the last cube of a row has spare units).
    #[cube]
    pub fn sample_position(samples: usize) -> usize {
        (CUBE_POS % cubes_per_channel(samples)) * CUBE_DIM as usize + UNIT_POS as usize
    }

    /// The row of this cube in a [`LaunchGeometry::per_row`](crate::LaunchGeometry::per_row) launch (check it against the row
    /// count: the grid may launch spare cubes).
    #[cube]
    pub fn row_position() -> usize {
        CUBE_POS
    }

    /// The elements of a row one unit of the cube takes: `start`, `start + step`, … below `end`.
    ///
    /// On GPUs neighbouring units take neighbouring elements (`step` = units per cube), so a plane's
    /// loads coalesce; on a runtime that runs one unit per thread each unit takes one contiguous run
    /// (`step` = 1), which is what its caches want.
    #[derive(CubeType, Clone, Copy)]
    pub struct RowShare {
        /// The first element of this unit.
        pub start: usize,
        /// Distance between this unit's elements.
        pub step: usize,
        /// One past the last element (of the row or of this unit's run).
        pub end: usize,
    }

    /// This unit's share of a row of `len` elements; `contiguous` is
    /// [`LaunchGeometry::contiguous_runs`](crate::LaunchGeometry::contiguous_runs).
    ///
    /// ```text
    /// let share = row_share(len, contiguous);
    /// let mut i = share.start;
    /// while i < share.end { /* element i */ i += share.step; }
    /// ```
    #[cube]
    pub fn row_share(len: usize, #[comptime] contiguous: bool) -> RowShare {
        row_share_of(len, UNIT_POS as usize, CUBE_DIM as usize, contiguous)
    }

    /// Share `part` of `parts` of a row of `len` elements, for rows shared by a group of
    /// units other than the whole cube (e.g. a plane's worth of lanes): neighbouring parts take
    /// neighbouring elements, or contiguous runs when `contiguous`.
    #[cube]
    pub fn row_share_of(
        len: usize,
        part: usize,
        parts: usize,
        #[comptime] contiguous: bool,
    ) -> RowShare {
        if comptime![contiguous] {
            let run = len.div_ceil(parts);
            let start = min(part * run, len);
            RowShare {
                start,
                step: 1usize,
                end: min(start + run, len),
            }
        } else {
            RowShare {
                start: part,
                step: parts,
                end: len,
            }
        }
    }
}

#[cfg(test)]
#[path = "tests/geometry.rs"]
mod tests;
