//! The roofline of each device: every kernel's fastest checked row (per toolchain
//! and precision) placed at its arithmetic intensity, under the roofs gemmlab can
//! compute for that device (FMA peak at the reported maximum clock, DRAM bandwidth).

use super::data::{self, is_vendor, Data, GpuFacts, Rec};
use crate::kernel::builtin::Precision;
use crate::results::Measurement;

/// One kernel's point.
#[derive(Debug, Clone)]
pub struct Point<'a> {
    pub rec: Rec<'a>,
    /// FLOP per byte of the traffic the computation cannot avoid.
    pub flop_per_byte: f64,
    pub gflops: f64,
    /// The roof at this intensity and precision, where the device's roofs are known.
    pub roof_gflops: Option<f64>,
}

impl Point<'_> {
    /// The share of the roof reached.
    pub fn of_roof(&self) -> Option<f64> {
        self.roof_gflops.map(|r| self.gflops / r)
    }
}

/// One device: its roofs and its points, fastest first.
#[derive(Debug, Clone)]
pub struct Device<'a> {
    pub name: String,
    pub facts: GpuFacts,
    pub points: Vec<Point<'a>>,
}

impl Device<'_> {
    /// The peak of a precision, where gemmlab knows it for this device.
    pub fn peak(&self, p: Precision) -> Option<f64> {
        match p {
            Precision::F32 => self.facts.peak_gflops(),
            Precision::F64 => self.facts.peak_f64_gflops(),
        }
    }

    /// The roof at `flop_per_byte` for precision `p`: the lower of the peak and
    /// bandwidth x intensity; the peak alone without a bandwidth.
    pub fn roof(&self, p: Precision, flop_per_byte: f64) -> Option<f64> {
        let peak = self.peak(p)?;
        Some(match self.facts.bandwidth_gbs {
            Some(bw) => peak.min(bw * flop_per_byte),
            None => peak,
        })
    }

    /// Where the bandwidth roof meets the FP32 peak (FLOP/byte).
    pub fn ridge(&self) -> Option<f64> {
        Some(self.facts.peak_gflops()? / self.facts.bandwidth_gbs?)
    }

    /// The precisions of its points, f32 first.
    pub fn precisions(&self) -> Vec<Precision> {
        (Precision::ALL.into_iter())
            .filter(|p| self.points.iter().any(|pt| pt.rec.m.precision() == *p))
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Roofline<'a> {
    pub devices: Vec<Device<'a>>,
}

/// FLOP per byte: a GEMM's 2mnk over A and B read once and C written once (and
/// read where beta is not 0); a user kernel's FLOP over the bytes it states
/// (GFLOP/s over GB/s). None where a row says neither.
pub fn intensity(m: &Measurement) -> Option<f64> {
    if m.dims.is_some() {
        let (g, b) = (data::gflops(m)?, m.gbs.filter(|b| *b > 0.0)?);
        return Some(g / b);
    }
    let (mm, n, k) = (m.m as f64, m.n as f64, m.k as f64);
    if mm * n * k == 0.0 {
        return None;
    }
    let c_reads = match m.problem.is_some_and(|p| p.beta != 0.0) {
        true => 2.0,
        false => 1.0,
    };
    let elems = mm * k + k * n + c_reads * mm * n;
    let bytes = elems * m.precision().elem().size() as f64;
    Some(2.0 * mm * n * k / bytes)
}

/// Rows of one kernel as one point: the same kernel, variant, toolchain and precision.
fn same_series(a: &Measurement, b: &Measurement) -> bool {
    a.kernel == b.kernel
        && a.variant == b.variant
        && a.toolchain == b.toolchain
        && a.precision() == b.precision()
        && a.dims.is_some() == b.dims.is_some()
}

pub fn analyse(data: &Data) -> Option<Roofline<'_>> {
    let mut devices: Vec<Device> = Vec::new();
    for r in data.measured() {
        let (Some(gflops), Some(flop_per_byte)) = (data::gflops(r.m), intensity(r.m)) else {
            continue;
        };
        let i = match devices.iter().position(|d| d.name == r.m.device) {
            Some(i) => i,
            None => {
                let facts = data.gpu_facts(r.run, r.m);
                let name = r.m.device.clone();
                devices.push(Device {
                    name,
                    facts,
                    points: Vec::new(),
                });
                devices.len() - 1
            }
        };
        let d = &mut devices[i];
        let point = Point {
            rec: r,
            flop_per_byte,
            gflops,
            roof_gflops: d.roof(r.m.precision(), flop_per_byte),
        };
        match d.points.iter().position(|p| same_series(p.rec.m, r.m)) {
            Some(j) if d.points[j].gflops < gflops => d.points[j] = point,
            Some(_) => {}
            None => d.points.push(point),
        }
    }
    for d in &mut devices {
        d.points.sort_by(|a, b| b.gflops.total_cmp(&a.gflops));
    }
    devices.retain(|d| !d.points.is_empty());
    (!devices.is_empty()).then_some(Roofline { devices })
}

/// The point of the vendor's library on a device, if measured.
pub fn vendor<'a, 'b>(d: &'b Device<'a>) -> impl Iterator<Item = &'b Point<'a>> {
    d.points.iter().filter(|p| is_vendor(p.rec.m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_square_sgemm_moves_three_matrices() {
        let mut m = crate::results::failed_row(
            "compare",
            "NVIDIA H200",
            "cuda:0",
            crate::backend::Toolchain::Cuda,
            "gemm6",
            crate::gemm::driver::Status::Ok,
            (4096, 4096, 4096),
        );
        // 2 n^3 / (3 n^2 x 4 bytes) = n / 6
        assert!((intensity(&m).unwrap() - 4096.0 / 6.0).abs() < 1e-9);
        m.dims = Some([("n".to_string(), 100)].into_iter().collect());
        m.gflops = Some(10.0);
        m.gbs = Some(120.0);
        assert!((intensity(&m).unwrap() - 10.0 / 120.0).abs() < 1e-12);
    }

    #[test]
    fn the_roof_is_the_lower_of_peak_and_bandwidth() {
        let d = Device {
            name: "H200".into(),
            facts: GpuFacts {
                compute_capability: Some((9, 0)),
                sms: Some(132),
                clock_mhz: Some(1980),
                bandwidth_gbs: Some(4800.0),
            },
            points: Vec::new(),
        };
        let peak = d.peak(Precision::F32).unwrap();
        assert!((peak - 66908.16).abs() < 1e-6);
        assert!((d.peak(Precision::F64).unwrap() - peak / 2.0).abs() < 1e-6);
        assert_eq!(d.roof(Precision::F32, 1.0), Some(4800.0));
        assert_eq!(d.roof(Precision::F32, 1000.0), Some(peak));
        assert!((d.ridge().unwrap() - peak / 4800.0).abs() < 1e-9);
    }
}
