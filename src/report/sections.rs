//! The report's sections behind one interface: each is an analysis of the data
//! (typed findings and tables, no prose) and a rendering of that analysis. The
//! report is the list [`SECTIONS`]; adding a section is one analysis, one
//! implementation of [`ReportSection`] and one entry there.

use std::path::PathBuf;

use super::data::Data;
use super::{
    attribution, blas, clocks, compare, lecture, offline, roofline, routine, runtime, simt, sweeps,
    tc, tune, user, Ctx, Section,
};
use crate::analysis;
use crate::error::Result;

/// What every section is given: the data and the command's choices.
pub(crate) struct Input<'a> {
    pub data: &'a Data,
    /// `report --size`: the size the comparison's tables are for.
    pub size: Option<(usize, usize, usize)>,
    /// The device all runs used, where there is one.
    pub device: Option<String>,
    /// The result directories the report reads.
    pub from: &'a [PathBuf],
}

/// One section: its analysis, then its rendering. A section whose analysis
/// finds nothing to say is left out.
pub(crate) trait ReportSection {
    type Analysis<'a>;
    fn analyse<'a>(input: &Input<'a>) -> Option<Self::Analysis<'a>>;
    fn render(ctx: &mut Ctx, a: &Self::Analysis<'_>) -> Result<Section>;
}

/// A section of the list, built.
type Build = fn(&mut Ctx, &Input) -> Result<Section>;

fn build<S: ReportSection>(ctx: &mut Ctx, input: &Input) -> Result<Section> {
    match S::analyse(input) {
        Some(a) => S::render(ctx, &a),
        None => Ok(Section::default()),
    }
}

/// The report's sections, in the order they appear.
pub(crate) const SECTIONS: [Build; 20] = [
    build::<Compare>,
    build::<Roofline>,
    build::<Blas>,
    build::<Lecture>,
    build::<Simt>,
    build::<Routine>,
    build::<TensorCores>,
    build::<RegisterSweep>,
    build::<TilingSweep>,
    build::<HintsSweep>,
    build::<JitSweep>,
    build::<RuntimeGap>,
    build::<Tuning>,
    build::<UserKernels>,
    build::<Kepler>,
    build::<Atlas>,
    build::<OfflineSweeps>,
    build::<Attribution>,
    build::<Failures>,
    build::<Clocks>,
];

/// Declares a section: its name, its analysis type, how the analysis is made
/// from the input and how it is rendered.
macro_rules! section {
    ($name:ident, $analysis:ty, |$input:ident| $analyse:expr, |$ctx:ident, $a:ident| $render:expr) => {
        pub(crate) struct $name;
        impl ReportSection for $name {
            type Analysis<'a> = $analysis;
            fn analyse<'a>($input: &Input<'a>) -> Option<Self::Analysis<'a>> {
                $analyse
            }
            #[allow(unused_variables)]
            fn render($ctx: &mut Ctx, $a: &Self::Analysis<'_>) -> Result<Section> {
                $render
            }
        }
    };
}

section!(
    Compare,
    analysis::compare::Compare<'a>,
    |i| analysis::compare::analyse(i.data, i.size),
    |ctx, a| compare::section(ctx, a)
);
section!(
    Roofline,
    analysis::roofline::Roofline<'a>,
    |i| analysis::roofline::analyse(i.data),
    |ctx, a| roofline::section(ctx, a)
);
section!(
    Blas,
    analysis::blas::Blas<'a>,
    |i| analysis::blas::analyse(i.data),
    |ctx, a| blas::section(ctx, a)
);
section!(
    Lecture,
    analysis::lecture::Lecture<'a>,
    |i| analysis::lecture::analyse(i.data),
    |ctx, a| lecture::section(ctx, a)
);
section!(
    Simt,
    analysis::simt::Simt<'a>,
    |i| Some(analysis::simt::analyse(i.data, i.from, i.device.is_none())),
    |ctx, a| simt::section(ctx, a)
);
section!(
    Routine,
    Vec<analysis::routine::Suite<'a>>,
    |i| Some(analysis::routine::analyse(i.data)),
    |ctx, a| routine::section(ctx, a)
);
section!(
    TensorCores,
    analysis::tc::Tc<'a>,
    |i| analysis::tc::analyse(i.data),
    |ctx, a| tc::section(a)
);
section!(
    RegisterSweep,
    analysis::sweeps::Sweep<'a, Option<u32>>,
    |i| Some(analysis::sweeps::registers(i.data)),
    |ctx, a| sweeps::registers(ctx, a)
);
section!(
    TilingSweep,
    analysis::sweeps::Sweep<'a, (i64, i64)>,
    |i| Some(analysis::sweeps::tiling(i.data, i.device.as_deref())),
    |ctx, a| sweeps::tiling(ctx, a)
);
section!(
    HintsSweep,
    analysis::sweeps::Sweep<'a, String>,
    |i| Some(analysis::sweeps::hints(i.data)),
    |ctx, a| sweeps::hints(a)
);
section!(
    JitSweep,
    analysis::sweeps::Jit<'a>,
    |i| Some(analysis::sweeps::jit(i.data)),
    |ctx, a| sweeps::jit(a)
);
section!(
    RuntimeGap,
    analysis::runtime::Runtime<'a>,
    |i| analysis::runtime::analyse(i.data),
    |ctx, a| Ok(runtime::section(a))
);
section!(
    Tuning,
    analysis::tune::Tune<'a>,
    |i| Some(analysis::tune::analyse(i.data)),
    |ctx, a| tune::section(ctx, a)
);
section!(
    UserKernels,
    analysis::user::User<'a>,
    |i| Some(analysis::user::analyse(i.data)),
    |ctx, a| user::section(ctx, a)
);
section!(
    Kepler,
    Option<analysis::offline::kepler::Kepler<'a>>,
    |i| Some(analysis::offline::kepler::analyse(i.data)),
    |ctx, a| Ok(offline::kepler(a.as_ref()))
);
section!(
    Atlas,
    Option<analysis::offline::atlas::Atlas<'a>>,
    |i| Some(analysis::offline::atlas::analyse(i.data)),
    |ctx, a| offline::atlas(ctx, a.as_ref())
);
section!(
    OfflineSweeps,
    Option<analysis::offline::Sweeps<'a>>,
    |i| Some(analysis::offline::sweeps(i.data)),
    |ctx, a| Ok(offline::sweeps(a.as_ref()))
);
section!(
    Attribution,
    Option<analysis::attribution::Attribution<'a>>,
    |i| Some(analysis::attribution::analyse(i.data)),
    |ctx, a| Ok(attribution::section(a.as_ref()))
);
section!(
    Failures,
    analysis::failures::Failures<'a>,
    |i| Some(analysis::failures::analyse(i.data)),
    |ctx, a| Ok(super::failures(a))
);
section!(
    Clocks,
    analysis::clocks::Clocks<'a>,
    |i| Some(analysis::clocks::analyse(i.data)),
    |ctx, a| Ok(clocks::section(a))
);
