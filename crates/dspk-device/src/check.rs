//! A tiny kernel that proves a device compiles and runs kernels: `dspk devices --check`, the
//! device tests, and the start-up and exit measurements use it.

use cubecl::client::Client;
use cubecl::prelude::*;
use dspk_types::ComputeError;

use crate::adapter::runtime_of_client;
use crate::failure::device_failure;

/// Units per cube of the check kernel.
const UNITS: u32 = 64;

/// `output[i] = input[i] * scale + offset`, one unit per element.
#[cube(launch)]
fn scale_offset(input: &[f32], output: &mut [f32], scale: f32, offset: f32) {
    if ABSOLUTE_POS < input.len() {
        output[ABSOLUTE_POS] = input[ABSOLUTE_POS] * scale + offset;
    }
}

/// Runs the check kernel on `client`: returns `input[i] * scale + offset` for every element,
/// computed on the device (compiled on first use, or taken from the kernel cache).
///
/// # Errors
/// [`ComputeError::DeviceFailure`] when the input needs more cubes than the device's grid has
/// along x (`input.len() > 64 × max_cube_count.0`), or when the device fails to run the kernel
/// or to read its output back.
pub fn run_check_kernel(
    client: &Client,
    input: &[f32],
    scale: f32,
    offset: f32,
) -> Result<Vec<f32>, ComputeError> {
    let failure = |reason: String| device_failure(runtime_of_client(client), reason);
    if input.is_empty() {
        return Ok(Vec::new());
    }
    let cubes = input.len().div_ceil(UNITS as usize);
    let max_cubes = client.properties().hardware.max_cube_count.0;
    let cubes = u32::try_from(cubes)
        .ok()
        .filter(|&c| c <= max_cubes)
        .ok_or_else(|| {
            failure(format!(
                "check kernel input of {} elements needs {cubes} cubes, the grid allows {max_cubes}",
                input.len()
            ))
        })?;
    let input_handle = client.create_from_slice(f32::as_bytes(input));
    let output_handle = client.empty(std::mem::size_of_val(input));
    #[expect(
        unsafe_code,
        reason = "CubeCL's buffer arguments are unsafe to build: the length must match the buffer"
    )]
    // SAFETY: both buffers hold exactly `input.len()` f32 values, the length given.
    let (input_arg, output_arg) = unsafe {
        (
            BufferArg::from_raw_parts(input_handle, input.len()),
            BufferArg::from_raw_parts(output_handle.clone(), input.len()),
        )
    };
    scale_offset::launch(
        client,
        CubeCount::Static(cubes, 1, 1),
        CubeDim::new_1d(UNITS),
        input_arg,
        output_arg,
        scale,
        offset,
    );
    let bytes = client
        .read_one(output_handle)
        .map_err(|e| failure(format!("check kernel failed: {e:?}")))?;
    Ok(f32::from_bytes(&bytes).to_vec())
}

/// Runs the check kernel on a few values and compares the result with the host's.
///
/// # Errors
/// As [`run_check_kernel`], and [`ComputeError::DeviceFailure`] when the device computed a
/// wrong result.
pub fn check_device(client: &Client) -> Result<(), ComputeError> {
    let input: Vec<f32> = (0..1000u16).map(|i| f32::from(i) * 0.25 - 100.0).collect();
    let (scale, offset) = (1.5_f32, -2.0_f32);
    let output = run_check_kernel(client, &input, scale, offset)?;
    let wrong = input
        .iter()
        .zip(&output)
        .position(|(x, y)| (x * scale + offset - y).abs() > 1e-4 * (1.0 + y.abs()));
    match (output.len() == input.len(), wrong) {
        (true, None) => Ok(()),
        (false, _) => Err(device_failure(
            runtime_of_client(client),
            format!(
                "check kernel returned {} values for {}",
                output.len(),
                input.len()
            ),
        )),
        (true, Some(i)) => Err(device_failure(
            runtime_of_client(client),
            format!(
                "check kernel computed {} at {i}, expected {}",
                output[i],
                input[i] * scale + offset
            ),
        )),
    }
}
