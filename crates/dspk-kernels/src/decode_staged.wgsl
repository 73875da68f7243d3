// The decode kernel that reads an int16 window in place, from the host staging buffer it was
// filled into (dspk-device's `Uploader::upload` to a `Destination::Kernel`), and writes it as scaled f32
// channel-major: decoded[c * samples + t] = f32(stored(c, t)) * gains[c] + offsets[c], where the
// window is time-major (params[4] == 0: stored(c, t) is value t * channels + c) or channel-major
// (params[4] == 1: value c * samples + t, so value v lands at decoded[v]).
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

// Value j (of the eight in `words`) as channel c's scaled f32: the int16 sign-extended, times
// gains[c], rounded (the guard), plus offsets[c].
fn scaled(words: vec4<u32>, j: u32, c: u32, zero: u32) -> f32 {
    let bits = (words[j >> 1u] >> ((j & 1u) * 16u)) << 16u;
    let x = f32(bitcast<i32>(bits) >> 16u);
    let product = bitcast<f32>(bitcast<u32>(x * gains[c]) | zero);
    return product + offsets[c];
}

@compute @workgroup_size(64)
fn decode_i16(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let values = params[0];
    let channels = params[1];
    let samples = params[2];
    let zero = params[3];
    let channel_major = params[4] == 1u;
    let quads = (values + 7u) / 8u;
    let stride = groups.x * 64u;
    if (channel_major) {
        for (var q = id.x; q < quads; q = q + stride) {
            let words = staged[q];
            let first = q * 8u;
            var c = first / samples;
            var t = first - c * samples;
            for (var j = 0u; j < 8u; j = j + 1u) {
                if (first + j >= values) {
                    break;
                }
                decoded[first + j] = scaled(words, j, c, zero);
                t = t + 1u;
                if (t == samples) {
                    t = 0u;
                    c = c + 1u;
                }
            }
        }
        return;
    }
    for (var q = id.x; q < quads; q = q + stride) {
        let words = staged[q];
        let first = q * 8u;
        var t = first / channels;
        var c = first - t * channels;
        for (var j = 0u; j < 8u; j = j + 1u) {
            if (first + j >= values) {
                break;
            }
            decoded[c * samples + t] = scaled(words, j, c, zero);
            c = c + 1u;
            if (c == channels) {
                c = 0u;
                t = t + 1u;
            }
        }
    }
}
