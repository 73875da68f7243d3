//! A worker's device from its environment (the cases `dspk run` has always been held to) and
//! from its number in a pool.

use super::*;

fn slurm(local: Option<usize>, gpus: Option<&[usize]>, ordinals: Option<&[usize]>) -> Worker {
    Worker::Slurm(SlurmPlace {
        local_id: local,
        gpus: gpus.map(<[usize]>::to_vec),
        ordinals: ordinals.map(<[usize]>::to_vec),
    })
}

/// The position chosen among `visible` GPUs numbered 0, 1… (the catalog's numbers are then
/// the positions).
fn chosen(w: &Worker, visible: usize) -> Option<usize> {
    let gpus: Vec<usize> = (0..visible).collect();
    worker_device(w, ComputeTarget::Wgpu, &gpus).unwrap().index
}

#[test]
fn devices_follow_the_slurm_allocation() {
    // Not a Slurm job, or no GPU: the default device.
    assert_eq!(chosen(&Worker::Slurm(SlurmPlace::default()), 8), None);
    assert_eq!(chosen(&slurm(Some(3), Some(&[5]), None), 0), None);
    // Every GPU of the node visible (no device cgroup): Slurm's numbers are the node's.
    assert_eq!(chosen(&slurm(Some(0), Some(&[5]), Some(&[5])), 8), Some(5));
    assert_eq!(chosen(&slurm(Some(1), Some(&[2, 6]), None), 8), Some(6));
    assert_eq!(chosen(&slurm(Some(2), Some(&[2, 6]), None), 8), Some(2));
    // Only the allocated GPUs visible (a cgroup hides the rest): the job's own are 0, 1…
    assert_eq!(chosen(&slurm(Some(0), Some(&[5]), Some(&[0])), 1), Some(0));
    assert_eq!(chosen(&slurm(Some(1), Some(&[5, 7]), None), 2), Some(1));
    assert_eq!(chosen(&slurm(Some(1), None, Some(&[0, 1])), 2), Some(1));
    // No GPU variables: the task's local number modulo the GPUs seen.
    assert_eq!(chosen(&slurm(Some(5), None, None), 4), Some(1));
    // A number the job cannot see is an error that names it.
    let e = worker_device(
        &slurm(Some(0), None, Some(&[3])),
        ComputeTarget::Wgpu,
        &[0, 1],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("GPU_DEVICE_ORDINAL names GPU 3") && e.contains("sees 2 GPUs"),
        "{e}"
    );
    let gpus: Vec<usize> = (0..8).collect();
    let why = worker_device(
        &slurm(Some(1), Some(&[2, 6]), None),
        ComputeTarget::Wgpu,
        &gpus,
    )
    .unwrap()
    .reason;
    assert!(
        why.contains("SLURM_LOCALID 1") && why.contains("GPU 6 of 8"),
        "{why}"
    );
}

#[test]
fn a_position_among_the_gpus_is_the_catalogs_number() {
    // A software rasterizer numbered 0 and two GPUs numbered 1 and 2: the task's second GPU is
    // dspk device 2.
    let chosen = worker_device(&slurm(Some(1), None, None), ComputeTarget::Wgpu, &[1, 2]).unwrap();
    assert_eq!(chosen.index, Some(2));
    assert!(
        chosen.reason.ends_with(": dspk device 2"),
        "{}",
        chosen.reason
    );
    let none = worker_device(&slurm(Some(1), None, None), ComputeTarget::Cuda, &[]).unwrap();
    assert_eq!(none.index, None);
    assert_eq!(
        none.reason,
        "the runtime's default device (cuda lists no GPU on this machine)"
    );
}

#[test]
fn pool_workers_take_their_entry_of_the_list() {
    let listed = |index, devices: &[usize]| {
        worker_device(
            &Worker::Listed {
                index,
                devices: devices.to_vec(),
            },
            ComputeTarget::Wgpu,
            &[],
        )
        .unwrap()
        .index
    };
    assert_eq!(listed(0, &[3, 1]), Some(3));
    assert_eq!(listed(1, &[3, 1]), Some(1));
    assert_eq!(listed(4, &[3, 1]), Some(3));
    assert_eq!(listed(7, &[]), None);
}

#[test]
fn slurm_variables_parse_or_name_the_bad_entry() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    };
    let place = SlurmPlace::from_vars(vars(&[
        ("SLURM_STEP_GPUS", "0,2, 3"),
        ("SLURM_LOCALID", "1"),
    ]))
    .unwrap();
    assert_eq!(place.gpus, Some(vec![0, 2, 3]));
    assert_eq!(place.local_id, Some(1));
    // The step's GPUs before the job's; an empty variable is unset.
    let place =
        SlurmPlace::from_vars(vars(&[("SLURM_STEP_GPUS", " "), ("SLURM_JOB_GPUS", "4")])).unwrap();
    assert_eq!(place.gpus, Some(vec![4]));
    assert!(SlurmPlace::from_vars(vars(&[])).unwrap().is_empty());
    let e = SlurmPlace::from_vars(vars(&[("SLURM_STEP_GPUS", "0,gpu1")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("'gpu1' is not a GPU number"), "{e}");
    let e = SlurmPlace::from_vars(vars(&[("SLURM_LOCALID", "x")]))
        .unwrap_err()
        .to_string();
    assert_eq!(e, "SLURM_LOCALID=\"x\" is not a task number");
}
