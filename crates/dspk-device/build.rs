//! Sets `vulkan_host` where dspk allocates host-memory staging buffers on Vulkan itself: the
//! `wgpu` feature on targets where wgpu has its Vulkan backend (not the web, not Apple).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(vulkan_host)");
    let wgpu = std::env::var_os("CARGO_FEATURE_WGPU").is_some();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let vendor = std::env::var("CARGO_CFG_TARGET_VENDOR").unwrap_or_default();
    if wgpu && arch != "wasm32" && vendor != "apple" {
        println!("cargo::rustc-cfg=vulkan_host");
    }
}
