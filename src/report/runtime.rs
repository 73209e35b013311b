//! "Where the CUDA-OpenCL gap comes from": each kernel's two PTX builds through
//! both runtimes (`analysis::runtime`), the gap split into the PTX's part and the
//! runtime's, and the verdict across kernels.

use std::fmt::Write as _;

use crate::analysis::runtime::{
    Factor, FactorEffect, Kind, Parts, Runtime, Split, Verdict, EXPLAINS, GAP_MIN,
};
use crate::results::Measurement;

use super::{md, Section, Words};

pub(crate) const TITLE: &str = "Where the CUDA-OpenCL gap comes from";

/// A cell's speed: GFLOP/s for a GEMM, the median time for a user's kernel, the
/// status word when it has no speed; registers beside it.
fn cell(m: Option<&Measurement>) -> String {
    let Some(m) = m else {
        return md::MISSING.into();
    };
    let speed = match (m.status.is_ok(), m.gflops, m.time) {
        (true, None, Some(t)) => format!("{:.3} ms", t.median_ns / 1e6),
        _ => md::gflops(Some(m)),
    };
    match m.resources.as_ref().and_then(|r| r.registers) {
        Some(r) if m.status.is_ok() => format!("{speed} ({r} regs)"),
        _ => speed,
    }
}

/// A part as a signed change ("+12.0%"), with its share of the gap.
fn part(p: Option<f64>, share: Option<f64>) -> String {
    match (p, share) {
        (Some(p), Some(s)) => format!("{:+.1}% ({:.0}% of the gap)", p * 100.0, s * 100.0),
        (Some(p), None) => format!("{:+.1}%", p * 100.0),
        _ => md::MISSING.into(),
    }
}

type Column = (&'static str, &'static dyn Fn(&Split) -> String);

const COLUMNS: [Column; 13] = [
    ("kernel", &|s| s.kernel.clone()),
    ("size", &|s| s.size.clone()),
    ("CUDA", &|s| cell(s.cuda)),
    ("OpenCL", &|s| cell(s.opencl)),
    ("CUDA over OpenCL", &|s| {
        s.parts
            .map_or(md::MISSING.into(), |p| format!("{:+.1}%", p.gap * 100.0))
    }),
    ("NVRTC PTX, CUDA JIT", &|s| cell(s.cells[0][0])),
    ("NVRTC PTX, OpenCL runtime", &|s| cell(s.cells[0][1])),
    ("OpenCL PTX, CUDA JIT", &|s| cell(s.cells[1][0])),
    ("OpenCL PTX, OpenCL runtime", &|s| cell(s.cells[1][1])),
    ("the PTX's part", &|s| {
        s.parts
            .map_or(md::MISSING.into(), |p| part(p.front, p.front_share))
    }),
    ("the runtime's part", &|s| {
        s.parts
            .map_or(md::MISSING.into(), |p| part(p.runtime, p.runtime_share))
    }),
    ("SM MHz, CUDA / OpenCL", &|s| {
        let mhz = |v: Option<f64>| v.map_or(md::MISSING.into(), |v| format!("{v:.0}"));
        format!("{} / {}", mhz(s.sm_mhz[0]), mhz(s.sm_mhz[1]))
    }),
    ("rest", &|s| {
        s.parts
            .map_or(md::MISSING.into(), |p| format!("{:+.1}%", p.rest * 100.0))
    }),
];

type FactorColumn = (&'static str, &'static dyn Fn(&(&Split, &Factor)) -> String);

fn share(v: Option<f64>) -> String {
    v.map_or(md::MISSING.into(), |v| format!("{:.0}%", v * 100.0))
}

const FACTORS: [FactorColumn; 7] = [
    ("kernel", &|(s, _)| s.kernel.clone()),
    ("size", &|(s, _)| s.size.clone()),
    ("factor", &|(_, f)| f.name.clone()),
    ("CUDA under it", &|(_, f)| cell(f.cuda)),
    ("share of the gap", &|(_, f)| share(f.effect.of_gap)),
    ("OpenCL PTX, CUDA JIT, under it", &|(_, f)| {
        cell(f.opencl_ptx)
    }),
    ("share of the runtime's part", &|(_, f)| {
        share(f.effect.of_runtime)
    }),
];

pub(crate) fn section(a: &Runtime) -> Section {
    let mut s = format!("## {TITLE}\n\n");
    let _ = writeln!(
        s,
        "Each kernel's two PTX builds, NVRTC's and NVIDIA OpenCL's, each loaded as PTX through both \
         runtimes: the CUDA driver's JIT (`cuModuleLoadDataEx`) and NVIDIA's OpenCL runtime (the PTX as a \
         program binary, its buffer parameters declared `.ptr .global`), beside the two native builds \
         (`gemmlab sweep jit`). The same PTX through the two runtimes shows what the runtime does; the \
         two PTX through one runtime show what the front end does. Each part is averaged over the other \
         factor, in logs, so the two add up to the gap between the corner cells; **rest** is what they \
         leave of the native gap (the native build path and noise). Shares are given where the native \
         gap is over {:.0}%. A negative part favours OpenCL. Nsight Compute does not profile NVIDIA's OpenCL \
         runtime, so on its side these matched experiments stand in for counters.\n",
        GAP_MIN * 100.0
    );
    let _ = writeln!(s, "{}", md::table_of(&COLUMNS, &a.splits));
    let factors: Vec<(&Split, &Factor)> = (a.splits.iter())
        .flat_map(|sp| sp.factors.iter().map(move |f| (sp, f)))
        .collect();
    if !factors.is_empty() {
        let _ = writeln!(
            s,
            "### Runtime factors on the same binaries\n\nThe CUDA driver's lanes run again in the same run with one runtime \
             setting changed (`sweep jit --carveout`): the shared-memory carveout preference of every timed launch. \
             A factor that makes CUDA as slow as NVIDIA's OpenCL runtime on the same PTX reproduces the runtime's part; \
             {:.0}% or more names it the mechanism.\n\n{}",
            EXPLAINS * 100.0,
            md::table_of(&FACTORS, &factors)
        );
    }
    let why: Vec<String> = (a.splits.iter())
        .flat_map(|sp| {
            let cells = sp.cells.iter().flatten().flatten().copied();
            cells.chain(sp.clang.iter().copied()).filter_map(move |m| {
                let reason = md::short_reason(m.status.reason()?);
                let series = crate::results::reading::series_name(m);
                Some(format!(
                    "- {} at {}, {series}: {reason}",
                    sp.kernel, sp.size
                ))
            })
        })
        .collect();
    if !why.is_empty() {
        let _ = writeln!(s, "Why some cells have no speed:\n\n{}\n", why.join("\n"));
    }
    let clang: Vec<String> = (a.splits.iter())
        .flat_map(|sp| sp.clang.iter().map(move |m| (sp, *m)))
        .map(|(sp, m)| {
            let series = crate::results::reading::series_name(m);
            format!(
                "- {} at {}, {series}: {}",
                sp.kernel,
                sp.size,
                cell(Some(m))
            )
        })
        .collect();
    if !clang.is_empty() {
        let _ = writeln!(s, "Clang's PTX through NVIDIA's OpenCL runtime (through the CUDA driver it is the clang toolchains' own rows):\n\n{}\n", clang.join("\n"));
    }
    Section::of(TITLE, s, &a.findings)
}

fn signed(v: f64) -> String {
    format!("{:+.1}%", v * 100.0)
}

fn split_words(kernel: &str, size: &str, p: &Parts) -> Words {
    let who = match p.gap {
        g if g.abs() <= GAP_MIN => format!(
            "CUDA and NVIDIA OpenCL are within {:.0}% of each other ({})",
            GAP_MIN * 100.0,
            signed(g)
        ),
        g if g > 0.0 => format!("CUDA is {:.0}% faster than NVIDIA OpenCL", g * 100.0),
        g => format!(
            "NVIDIA OpenCL is {:.0}% faster than CUDA",
            -g / (1.0 + g) * 100.0
        ),
    };
    let runtime = p.runtime.map_or("could not be measured".into(), |r| {
        format!("changes the speed by {}", signed(r))
    });
    let front = p.front.map_or("could not be measured".into(), |f| {
        format!("by {}", signed(f))
    });
    let share = match (p.runtime_share, p.front_share) {
        (Some(r), Some(f)) => format!(
            ": the runtime explains {:.0}% of the gap and the PTX {:.0}%",
            r * 100.0,
            f * 100.0
        ),
        _ => String::new(),
    };
    Words {
        text: format!(
            "**{kernel} at {size}: {who}.** The same PTX through the CUDA driver instead of NVIDIA's OpenCL \
             runtime {runtime}; NVRTC's PTX instead of OpenCL's, on the same runtime, {front}{share} \
             (rest {}).",
            signed(p.rest)
        ),
        short: format!("{kernel} at {size}: {who}{share}."),
    }
}

pub(crate) fn words(k: &Kind) -> Words {
    match k {
        Kind::GapSplit {
            kernel,
            size,
            parts,
        } => split_words(kernel, size, parts),
        Kind::GapVerdict(v) => verdict_words(v),
        Kind::FactorTried {
            kernel,
            size,
            factor,
            gap,
            effect,
            others,
        } => factor_words(kernel, size, factor, *gap, effect, others),
    }
}

/// "reproduces 85% of the gap" / "of the runtime's part", or what it rules out.
fn reproduces(e: &FactorEffect) -> String {
    let cuda = e
        .cuda_change
        .map_or(String::new(), |c| format!("CUDA's own build {}", signed(c)));
    let share = match (e.of_runtime, e.of_gap) {
        (Some(r), _) => format!("{:.0}% of the runtime's part", r * 100.0),
        (None, Some(g)) => format!("{:.0}% of the gap", g * 100.0),
        _ => "an unknown share".into(),
    };
    format!("{share} ({cuda})")
}

fn factor_words(
    kernel: &str,
    size: &str,
    factor: &str,
    gap: f64,
    e: &FactorEffect,
    others: &[(String, FactorEffect)],
) -> Words {
    let share = e.of_runtime.or(e.of_gap).unwrap_or(0.0);
    let verdict = if share >= EXPLAINS {
        format!(
            "**{factor} on the CUDA driver reproduces {}**: it is the mechanism",
            reproduces(e)
        )
    } else {
        format!("the factor that comes closest, {factor} on the CUDA driver, reproduces {}: short of the {:.0}% that would name it the mechanism", reproduces(e), EXPLAINS * 100.0)
    };
    let rest: Vec<String> = (others.iter())
        .map(|(name, e)| format!("{name}: {}", reproduces(e)))
        .collect();
    let rest = match rest.is_empty() {
        true => String::new(),
        false => format!(" Also tried: {}.", rest.join("; ")),
    };
    Words {
        text: format!(
            "**{kernel} at {size}** (CUDA over OpenCL {}): {verdict}.{rest}",
            signed(gap)
        ),
        short: format!("{kernel} at {size}: {factor} reproduces {}.", reproduces(e)),
    }
}

fn verdict_words(v: &Verdict) -> Words {
    let Verdict {
        device,
        kernels,
        with_gap,
        runtime_led,
        ptx_led,
        median_gap,
        median_runtime_share,
        factors_tried,
        mechanisms,
        sm_mhz,
    } = v;
    let gap = median_gap.map_or(String::new(), |g| {
        format!(" (median CUDA over OpenCL {})", signed(g))
    });
    let pct = GAP_MIN * 100.0;
    let answer = match (with_gap.len(), runtime_led.len(), ptx_led.len()) {
        (0, ..) => format!(
            "No: on {device}, none of {} measured through both runtimes differs by more than {pct:.0}% between CUDA and NVIDIA OpenCL{gap}",
            md::plural(*kernels, "kernel")
        ),
        (n, r, p) => {
            let lead = match median_gap {
                Some(g) if *g > GAP_MIN => "Yes",
                _ => "For some kernels",
            };
            let mut parts = vec![format!(
                "{lead}: on {device}, {n} of {} differ by more than {pct:.0}%{gap}",
                md::plural(*kernels, "kernel")
            )];
            if r > 0 {
                parts.push(format!("the runtime (the same PTX through the other runtime) explains more than half of the gap for {}", md::join_and(runtime_led)));
            }
            if p > 0 {
                parts.push(format!("the PTX (the other front end's PTX on the same runtime) for {}", md::join_and(ptx_led)));
            }
            if r + p < n {
                parts.push(format!("{} with neither over half", md::plural(n - r - p, "kernel")));
            }
            parts.join("; ")
        }
    };
    let share = median_runtime_share.map_or(String::new(), |s| {
        format!(
            " Across them the runtime's median share of the gap is {:.0}%.",
            s * 100.0
        )
    });
    let named: Vec<String> = (mechanisms.iter())
        .map(|(at, factor, s)| format!("{factor} for {at} ({:.0}%)", s * 100.0))
        .collect();
    let mechanism = match (factors_tried.is_empty(), named.is_empty()) {
        (true, _) => String::new(),
        (false, false) => format!(
            " The runtime factors tried on the CUDA driver ({}) reproduce at least {:.0}% of the gap: {}.",
            md::join_and(factors_tried),
            EXPLAINS * 100.0,
            md::join_and(&named)
        ),
        (false, true) => format!(
            " None of the runtime factors tried on the CUDA driver ({}) reproduces {:.0}% of any gap: they are ruled out as its mechanism.",
            md::join_and(factors_tried),
            EXPLAINS * 100.0
        ),
    };
    let clocks = match sm_mhz {
        [Some(cu), Some(cl)] if (cu / cl - 1.0).abs() <= crate::analysis::SAME_SPEED => format!(
            " The SM clock after the timed launches was the same under both runtimes ({cu:.0} and {cl:.0} MHz, NVML): clocks are ruled out."
        ),
        [Some(cu), Some(cl)] => format!(
            " The SM clock after the timed launches differed: {cu:.0} MHz under the CUDA driver, {cl:.0} MHz under NVIDIA's OpenCL runtime (NVML)."
        ),
        _ => String::new(),
    };
    Words {
        text: format!(
            "**Is OpenCL slower on NVIDIA?** Measured, not assumed: {answer}.{share}{mechanism}{clocks}"
        ),
        short: format!("Is OpenCL slower on NVIDIA? {answer}."),
    }
}
