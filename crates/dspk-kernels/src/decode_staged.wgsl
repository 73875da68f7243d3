// The decode kernel that reads an int16 time-major window in place, from the host staging
// buffer it was filled into (dspk-device's `Uploader::upload_through`), and writes it as
// scaled f32 channel-major: decoded[c * samples + t] = f32(stored[t][c]) * gains[c] + offsets[c].
//
// The window crosses the bus once, pulled by this kernel: each invocation reads 16 contiguous
// bytes (8 values), so a subgroup's reads are one contiguous run of host memory.
//
// The product goes through `bitcast<u32>(..) | zero` (`zero` is a launch parameter, always 0,
// that no compiler can see is 0) so that no compiler or driver fuses the multiply and the add:
// the product is rounded before the add, as on the host (see decode.rs, "Arithmetic").
//
// Every device buffer is read_write: CubeCL may place several of them in one wgpu buffer, and
// wgpu refuses one buffer bound read-only and writable in the same dispatch.

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> staged: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> decoded: array<f32>;
@group(0) @binding(3) var<storage, read_write> gains: array<f32>;
@group(0) @binding(4) var<storage, read_write> offsets: array<f32>;

@compute @workgroup_size(64)
fn decode_i16_time_major(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let values = params[0];
    let channels = params[1];
    let samples = params[2];
    let zero = params[3];
    let quads = (values + 7u) / 8u;
    let stride = groups.x * 64u;
    for (var q = id.x; q < quads; q = q + stride) {
        let words = staged[q];
        let first = q * 8u;
        var t = first / channels;
        var c = first - t * channels;
        for (var j = 0u; j < 8u; j = j + 1u) {
            if (first + j >= values) {
                break;
            }
            let bits = (words[j >> 1u] >> ((j & 1u) * 16u)) << 16u;
            let x = f32(bitcast<i32>(bits) >> 16u);
            let product = bitcast<f32>(bitcast<u32>(x * gains[c]) | zero);
            decoded[c * samples + t] = product + offsets[c];
            c = c + 1u;
            if (c == channels) {
                c = 0u;
                t = t + 1u;
            }
        }
    }
}
