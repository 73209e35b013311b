//! A criterion `Measurement` whose values are device nanoseconds: the sum of
//! the kernels' device-event times (OpenCL profiling events, CUDA events), so
//! criterion's statistics describe kernel time, not host time.
//!
//! Use it with `Bencher::iter_custom`, returning the summed device time of
//! `iters` launches. Criterion itself still sizes its warm-up and sample
//! batches by wall-clock time, so `warm_up_time` and `measurement_time` keep
//! their usual meaning.

use std::time::Instant;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;

/// Device time in nanoseconds. Meant for `iter_custom` only; `start`/`end`
/// (used by `iter` and friends) fall back to host wall-clock nanoseconds.
pub struct DeviceTime;

impl Measurement for DeviceTime {
    type Intermediate = Instant;
    type Value = u64;

    fn start(&self) -> Instant {
        Instant::now()
    }

    fn end(&self, started: Instant) -> u64 {
        u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn add(&self, v1: &u64, v2: &u64) -> u64 {
        v1.saturating_add(*v2)
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &DeviceTimeFormatter
    }
}

/// Times in ns/µs/ms/s; throughput `Elements(n)` read as n floating-point
/// operations, printed as FLOP/s with an SI prefix (GFLOP/s, TFLOP/s).
pub struct DeviceTimeFormatter;

/// An SI prefix for a rate, chosen from the typical value.
fn si_rate(per_second: f64, unit: Units) -> (f64, &'static str) {
    let steps: [(f64, &'static str); 5] = match unit {
        Units::Flops => [
            (1e12, "TFLOP/s"),
            (1e9, "GFLOP/s"),
            (1e6, "MFLOP/s"),
            (1e3, "KFLOP/s"),
            (1.0, " FLOP/s"),
        ],
        Units::Bytes => [
            (1e12, "  TB/s"),
            (1e9, "  GB/s"),
            (1e6, "  MB/s"),
            (1e3, "  KB/s"),
            (1.0, "   B/s"),
        ],
        Units::Bits => [
            (1e12, "Tb/s"),
            (1e9, "Gb/s"),
            (1e6, "Mb/s"),
            (1e3, "Kb/s"),
            (1.0, " b/s"),
        ],
    };
    steps
        .into_iter()
        .find(|(d, _)| per_second >= *d)
        .unwrap_or((1.0, steps[4].1))
}

#[derive(Clone, Copy)]
enum Units {
    Flops,
    Bytes,
    Bits,
}

impl ValueFormatter for DeviceTimeFormatter {
    fn scale_values(&self, typical_ns: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical_ns < 1.0 {
            (1e3, "ps")
        } else if typical_ns < 1e3 {
            (1.0, "ns")
        } else if typical_ns < 1e6 {
            (1e-3, "µs")
        } else if typical_ns < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }

    fn scale_throughputs(
        &self,
        typical_ns: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (per_iteration, units) = match *throughput {
            Throughput::Elements(n) | Throughput::ElementsAndBytes { elements: n, .. } => {
                (n as f64, Units::Flops)
            }
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n as f64, Units::Bytes),
            Throughput::Bits(n) => (n as f64, Units::Bits),
        };
        let rate = |ns: f64| {
            if ns > 0.0 {
                per_iteration * 1e9 / ns
            } else {
                0.0
            }
        };
        let (denominator, unit) = si_rate(rate(typical_ns), units);
        for v in values {
            *v = rate(*v) / denominator;
        }
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
