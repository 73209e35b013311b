//! `gemmlab devices`: every device of every toolchain, or why a toolchain has none,
//! and what the clang toolchains compile with.

use gemmlab::backend::clang;
use gemmlab::{DeviceInfo, Inventory, Result, Toolchain};

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "unknown".to_string(), |x| x.to_string())
}

fn bytes(v: Option<u64>) -> String {
    match v {
        None => "unknown".into(),
        Some(b) if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        Some(b) if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        Some(b) => format!("{:.0} KiB", b as f64 / 1024.0),
    }
}

pub fn describe(d: &DeviceInfo) -> String {
    let cc = d
        .compute_capability
        .map_or_else(|| "unknown".into(), |(a, b)| format!("{a}.{b}"));
    let mut s = format!("  {}  {}  ({}, {})\n", d.id, d.name, d.kind, d.platform);
    let rows = [
        ("vendor", d.vendor.clone()),
        ("driver", opt(&d.driver_version)),
        ("runtime", opt(&d.runtime_version)),
        ("compiler", opt(&d.compiler_version)),
        ("compute capability", cc),
        ("compute units", opt(&d.compute_units)),
        (
            "clock",
            d.clock_mhz
                .map_or_else(|| "unknown".into(), |c| format!("{c} MHz")),
        ),
        ("global memory", bytes(d.global_mem_bytes)),
        ("local/shared per group", bytes(d.local_mem_bytes)),
        ("shared per SM", bytes(d.shared_mem_per_sm_bytes)),
        ("L2 / global cache", bytes(d.l2_cache_bytes)),
        ("max work-group size", opt(&d.max_work_group_size)),
        ("registers per block", opt(&d.registers_per_block)),
        ("registers per SM", opt(&d.registers_per_sm)),
        ("max threads per SM", opt(&d.max_threads_per_sm)),
        ("max blocks per SM", opt(&d.max_blocks_per_sm)),
        ("warp size", opt(&d.warp_size)),
        ("PCI bus id", opt(&d.pci_bus_id)),
    ];
    for (k, v) in rows {
        s.push_str(&format!("      {k:<24} {v}\n"));
    }
    s
}

pub fn run(json: bool) -> Result<()> {
    let inv = Inventory::discover();
    if json {
        let unavailable: Vec<_> = inv
            .unavailable
            .iter()
            .map(|(t, w)| serde_json::json!({"toolchain": t, "reason": w}))
            .collect();
        let compilers: Vec<_> = Toolchain::ALL
            .iter()
            .filter(|t| t.is_clang())
            .map(|t| match clang::describe(*t) {
                Ok(with) => serde_json::json!({"toolchain": t, "compiles": true, "with": with}),
                Err(why) => serde_json::json!({"toolchain": t, "compiles": false, "reason": why}),
            })
            .collect();
        let v = serde_json::json!({"devices": inv.devices, "unavailable": unavailable, "compilers": compilers});
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(());
    }
    for tc in Toolchain::ALL {
        let name = tc.info().made_of;
        println!("{name}:");
        let devs: Vec<&DeviceInfo> = inv.devices.iter().filter(|d| d.toolchain == tc).collect();
        for d in &devs {
            print!("{}", describe(d));
        }
        for (_, why) in inv.unavailable.iter().filter(|(t, _)| *t == tc) {
            if devs.is_empty() {
                println!("  unavailable: {why}");
            }
        }
        if tc.is_clang() {
            // clang compiles without a device: say so even where no GPU runs it.
            match clang::describe(tc) {
                Ok(with) => println!("  compiles (also offline, --arch): {with}"),
                Err(why) => println!("  cannot compile: {why}"),
            }
        }
        println!();
    }
    Ok(())
}
