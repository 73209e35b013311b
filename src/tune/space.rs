//! The search space of one kernel on one device and toolchain: every value of
//! every parameter the registry allows (or the values asked for), the hint
//! switches, and register caps; filtered by the registry's constraints and the
//! device's limits before anything is compiled, with a count of what each rule
//! removed, so an empty space says why it is empty.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::grid::{decode, strides, Grid};
use crate::backend::{DeviceInfo, Toolchain};
use crate::error::{Error, Result};
use crate::gemm::problem::Precision;
use crate::kernel::builtin::{
    Config, Constraint, Hints, KernelSpec, SwitchUse, PRECISION, USE_BOUNDS,
};
use crate::kernel::Kernel;

/// Register caps tried by default: none, then the steps where a 256-thread
/// group's occupancy changes on NVIDIA GPUs since Kepler (64K registers per SM).
pub const DEFAULT_CAPS: &[u32] = &[32, 64, 96, 128, 168, 255];

/// What the user asked the space to hold.
#[derive(Debug, Clone, Default)]
pub struct SpaceRequest {
    /// Values to try per parameter (NAME -> values); others take every allowed value.
    pub values: BTreeMap<String, Vec<i64>>,
    /// Switches to vary (on and off); others stay in their published state.
    /// `None`: every switch the kernel has that can be used on this device.
    pub switches: Option<Vec<String>>,
    /// Register caps to try besides none; `None`: `DEFAULT_CAPS`.
    pub caps: Option<Vec<u32>>,
    /// The precision the problem computes in: part of every configuration of a
    /// kernel written for `real` (never an axis).
    pub precision: Precision,
}

/// One dimension of the space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Axis {
    Param { name: String, values: Vec<i64> },
    Switch { name: String, values: Vec<bool> },
    Cap { values: Vec<Option<u32>> },
}

impl Axis {
    pub fn name(&self) -> &str {
        match self {
            Axis::Param { name, .. } | Axis::Switch { name, .. } => name,
            Axis::Cap { .. } => "maxrregcount",
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Axis::Param { values, .. } => values.len(),
            Axis::Switch { values, .. } => values.len(),
            Axis::Cap { values } => values.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How many points a rule removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Removal {
    pub rule: String,
    pub removed: u128,
}

/// One point of the space in the kernel's terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub config: Config,
    pub hints: Hints,
}

impl Candidate {
    /// A configuration with its published switches and no register cap.
    pub fn plain(config: Config) -> Candidate {
        Candidate {
            config,
            hints: Hints::default(),
        }
    }

    /// Its parameters, then what it changes of the published kernel.
    pub fn describe(&self) -> String {
        self.describe_from("published")
    }

    /// As [`Candidate::describe`], naming the unchanged kernel `base`
    /// ([`Kernel::unchanged`]): "ITEMS=16 defaults + maxrregcount=32".
    pub fn describe_from(&self, base: &str) -> String {
        self.hints.describe_with(&self.config, base)
    }
}

/// The filtered space.
#[derive(Debug, Clone)]
pub struct Space {
    pub kernel: Kernel,
    pub toolchain: Toolchain,
    pub precision: Precision,
    pub axes: Vec<Axis>,
    pub grid: Grid,
    /// Size of the product of the axes before filtering.
    pub before: u128,
    /// What each rule removed, in the order the rules were applied.
    pub removals: Vec<Removal>,
    /// Things about the space a reader should know (switches or caps left out, and why).
    pub notes: Vec<String>,
}

impl Space {
    /// Builds the space of `spec` on `device` as `request` asks. Errors: an unknown
    /// parameter or switch, a value the registry does not allow, a space that
    /// filters to nothing (naming what removed what).
    pub fn build(
        kernel: impl Into<Kernel>,
        device: &DeviceInfo,
        request: &SpaceRequest,
    ) -> Result<Space> {
        let kernel: Kernel = kernel.into();
        let mut notes = Vec::new();
        let axes = axes_of(kernel, device, request, &mut notes)?;
        let before: u128 = axes.iter().map(|a| a.len() as u128).product();

        // Parameters first: every registry constraint and device limit that
        // depends on them alone, the first failing rule taking the blame.
        let filtered = filter_param_axes(kernel, device, request.precision, &axes);
        let rest: u128 = axes
            .iter()
            .filter(|a| !matches!(a, Axis::Param { .. }))
            .map(|a| a.len() as u128)
            .product();
        let mut removals: Vec<Removal> = Vec::new();
        for (rule, n) in filtered.broken {
            blame(&mut removals, rule.describe(), u128::from(n) * rest);
        }
        // Then switches and caps: a cap too small for the work-group's register
        // file share is removed, everything else is kept.
        let rules = PointRules::new(kernel, device, &axes);
        let (blocks, classes, dropped) = rules.judge(&filtered.valid);
        dropped.blame(&rules.switch_rules, device, &mut removals);
        let grid = Grid::from_blocks(
            axes.iter().map(Axis::len).collect(),
            rules.others(),
            blocks,
            classes,
        );
        if grid.is_empty() {
            return Err(empty_space(kernel, device, before, &removals));
        }
        Ok(Space {
            kernel,
            toolchain: device.toolchain,
            precision: request.precision,
            axes,
            grid,
            before,
            removals,
            notes,
        })
    }

    pub fn len(&self) -> usize {
        self.grid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.grid.is_empty()
    }

    /// The candidate at `point`.
    pub fn candidate(&self, point: usize) -> Candidate {
        let coords = self.grid.coords(point);
        let mut config = config_of(&self.axes, &coords);
        if self
            .kernel
            .builtin()
            .is_some_and(KernelSpec::multi_precision)
        {
            config.0.insert(PRECISION.into(), self.precision.define());
        }
        let mut hints = Hints::default();
        for (axis, &i) in self.axes.iter().zip(&coords) {
            match axis {
                // Only switches away from this toolchain's published state are
                // recorded, so "published" reads as published in every result.
                Axis::Switch { name, values } => {
                    let on = values[i as usize];
                    if Some(on) != self.published(name) {
                        hints.switches.insert(name.clone(), on);
                    }
                }
                Axis::Cap { values } => hints.max_registers = values[i as usize],
                Axis::Param { .. } => {}
            }
        }
        Candidate { config, hints }
    }

    fn published(&self, switch: &str) -> Option<bool> {
        self.kernel
            .builtin()?
            .switches
            .iter()
            .find(|s| s.name() == switch)
            .map(|s| s.published(self.toolchain))
    }

    /// The point holding this candidate, if the space has it.
    pub fn find(&self, c: &Candidate) -> Option<usize> {
        let own = &c.hints;
        let mut coords = Vec::with_capacity(self.axes.len());
        for axis in &self.axes {
            let i = match axis {
                Axis::Param { name, values } => {
                    values.iter().position(|v| *v == c.config.get(name))?
                }
                Axis::Switch { name, values } => {
                    let published = self.published(name)?;
                    let on = own.switch(name).unwrap_or(published);
                    values.iter().position(|v| *v == on)?
                }
                Axis::Cap { values } => values.iter().position(|v| *v == own.max_registers)?,
            };
            coords.push(i as u8);
        }
        self.grid.find(&coords)
    }

    /// The published configuration (registry defaults, switches as published,
    /// no register cap), where the space holds it.
    pub fn published_point(&self) -> Option<usize> {
        let config = match self.kernel {
            Kernel::Builtin(spec) => spec
                .with_precision(&spec.config(&[]).ok()?, self.precision)
                .ok()?,
            Kernel::User(k) => k.config(&[]).ok()?,
        };
        self.find(&Candidate {
            config,
            hints: Hints::default(),
        })
    }

    /// "TSM 5 x TSN 5 x ... = 18750 points, 2310 after filtering".
    pub fn summary(&self) -> String {
        let dims: Vec<String> = self
            .axes
            .iter()
            .map(|a| format!("{} {}", a.name(), a.len()))
            .collect();
        format!(
            "{} on {}: {} = {} points before filtering, {} after",
            self.kernel.id(),
            self.toolchain,
            dims.join(" x "),
            self.before,
            self.len()
        )
    }
}

/// The axes of the space before filtering: one per parameter, one per switch
/// searched, then the register caps; `notes` says what was left out, and why.
fn axes_of(
    kernel: Kernel,
    device: &DeviceInfo,
    request: &SpaceRequest,
    notes: &mut Vec<String>,
) -> Result<Vec<Axis>> {
    let params = params_of(kernel);
    let known = |name: &String| params.iter().any(|p| &p.name == name);
    if let Some(name) = request.values.keys().find(|name| !known(name)) {
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        return Err(unknown(kernel, ("parameter", "parameters"), name, &names));
    }
    let mut axes = params
        .iter()
        .map(|p| param_axis(kernel, p, request.values.get(&p.name)))
        .collect::<Result<Vec<Axis>>>()?;
    axes.extend(switch_axes(
        kernel,
        device,
        request.switches.as_deref(),
        notes,
    )?);
    axes.push(cap_axis(device, request.caps.as_deref(), notes)?);
    Ok(axes)
}

/// "K has no parameter X; its parameters: A, B" (or "none"), `what` singular and plural.
fn unknown(kernel: Kernel, what: (&str, &str), name: &str, names: &[&str]) -> Error {
    Error::invalid(format!(
        "{} has no {} {name}; its {}: {}",
        kernel.id(),
        what.0,
        what.1,
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    ))
}

/// A parameter's axis: the values asked for (each one the registry allows; sorted,
/// once each), else every value it allows, else its default.
fn param_axis(kernel: Kernel, p: &ParamView, asked: Option<&Vec<i64>>) -> Result<Axis> {
    let values = match asked {
        Some(v) => {
            if let Some(bad) = v
                .iter()
                .find(|x| !p.allowed.is_empty() && !p.allowed.contains(x))
            {
                return Err(Error::Constraint {
                    kernel: kernel.id().into(),
                    message: format!("{} must be one of {:?} ({})", p.name, p.allowed, p.meaning),
                    values: format!("{}={bad}", p.name),
                });
            }
            let mut v = v.clone();
            v.sort_unstable();
            v.dedup();
            v
        }
        None if p.allowed.is_empty() => vec![p.default],
        None => p.allowed.clone(),
    };
    Ok(Axis::Param {
        name: p.name.clone(),
        values,
    })
}

/// An axis per switch searched (those `named`, else every one that keeps the
/// arithmetic's precision), except where the device cannot take it.
fn switch_axes(
    kernel: Kernel,
    device: &DeviceInfo,
    named: Option<&[String]>,
    notes: &mut Vec<String>,
) -> Result<Vec<Axis>> {
    let switches: &[SwitchUse] = kernel.builtin().map_or(&[], |b| b.switches);
    let wanted: Vec<String> = match named {
        Some(list) => {
            if let Some(name) = list.iter().find(|name| !kernel.has_switch(name)) {
                let names = kernel.switch_names();
                return Err(unknown(kernel, ("switch", "switches"), name, &names));
            }
            list.to_vec()
        }
        // "All" keeps the arithmetic's precision: a switch that lowers it is
        // searched only where it is named.
        None => {
            for s in switches.iter().filter(|s| s.switch.lowers_precision) {
                notes.push(format!(
                    "{} stays in its published state: turned, it lowers the precision (name it in --switches to search it)",
                    s.name()
                ));
            }
            switches
                .iter()
                .filter(|s| !s.switch.lowers_precision)
                .map(|s| s.name().to_string())
                .collect()
        }
    };
    let mut axes = Vec::new();
    for s in switches {
        if !wanted.iter().any(|w| w == s.name()) {
            continue;
        }
        if s.switch.opencl_needs_nvidia && !device.is_nvidia() {
            notes.push(format!(
                "{} stays off: OpenCL C has no such operation and {} takes no NVIDIA inline PTX",
                s.name(),
                device.platform
            ));
            continue;
        }
        let published = s.published(device.toolchain);
        // Published state first, so the first point of a fresh search is the published kernel.
        axes.push(Axis::Switch {
            name: s.name().to_string(),
            values: vec![published, !published],
        });
    }
    Ok(axes)
}

/// The register caps: none, then those asked for (`DEFAULT_CAPS` by default) where
/// the device's compiler takes a cap; asking for caps elsewhere is an error.
fn cap_axis(device: &DeviceInfo, asked: Option<&[u32]>, notes: &mut Vec<String>) -> Result<Axis> {
    let mut caps: Vec<Option<u32>> = vec![None];
    match (asked, device.is_nvidia()) {
        (Some(list), false) if !list.is_empty() => {
            return Err(Error::invalid(format!(
                "register caps cannot be tuned on {}: it has no register-cap option",
                device.platform
            )))
        }
        (_, false) => notes.push(format!(
            "no register caps: {} has no register-cap option",
            device.platform
        )),
        (list, true) => {
            let mut list = list.map_or_else(|| DEFAULT_CAPS.to_vec(), <[u32]>::to_vec);
            let range = crate::error::REGISTER_CAP_RANGE;
            if let Some(bad) = list.iter().find(|r| !range.contains(r)) {
                return Err(Error::invalid(format!(
                    "register cap {bad}: ptxas honours caps from {} to {}",
                    range.start(),
                    range.end()
                )));
            }
            list.sort_unstable();
            list.dedup();
            caps.extend(list.into_iter().map(Some));
        }
    }
    Ok(Axis::Cap { values: caps })
}

/// Adds `n` points to what `rule` removed (a rule met again adds to its row).
fn blame(removals: &mut Vec<Removal>, rule: String, n: u128) {
    match removals.iter_mut().find(|r| r.rule == rule) {
        Some(r) => r.removed += n,
        None => removals.push(Removal { rule, removed: n }),
    }
}

/// The error of a space filtered to nothing, naming what removed what.
fn empty_space(kernel: Kernel, device: &DeviceInfo, before: u128, removals: &[Removal]) -> Error {
    let why: Vec<String> = removals
        .iter()
        .map(|r| format!("  {} removed {}", r.rule, r.removed))
        .collect();
    Error::invalid(format!(
        "the search space of {} on {} is empty: all {before} points were filtered out:\n{}",
        kernel.id(),
        device.label(),
        why.join("\n")
    ))
}

/// The parameter configurations of `axes` (their parameter axes, which come
/// first) that break no registry constraint or device limit, a multi-precision
/// kernel's configurations at `precision`.
fn filter_param_axes(
    kernel: Kernel,
    device: &DeviceInfo,
    precision: Precision,
    axes: &[Axis],
) -> Filtered {
    let multi_precision = kernel.builtin().is_some_and(KernelSpec::multi_precision);
    let param_axes: Vec<(&str, &Vec<i64>)> = axes
        .iter()
        .filter_map(|a| match a {
            Axis::Param { name, values } => Some((name.as_str(), values)),
            _ => None,
        })
        .collect();
    let param_sizes: Vec<usize> = param_axes.iter().map(|(_, v)| v.len()).collect();
    filter_params(&param_axes, &param_sizes, |config| {
        if multi_precision {
            config.0.insert(PRECISION.into(), precision.define());
        }
        param_rule(kernel, device, config)
    })
}

/// The rules judged on the switch and cap combinations (the axes after the
/// parameters) of each valid parameter point.
struct PointRules<'a> {
    kernel: Kernel,
    device: &'a DeviceInfo,
    axes: &'a [Axis],
    /// How many parameter axes lead `axes`.
    n_param: usize,
    param_strides: Vec<u64>,
    /// Every coordinate vector of the axes after the parameters, the cap fastest.
    other_coords: Vec<Vec<u8>>,
    /// The cap's place in those vectors (the last axis).
    cap_at: usize,
    cap_values: &'a [Option<u32>],
    n_caps: usize,
    /// Registry constraints that involve a switch (e.g. simt's K-major operands
    /// and cp.async): judged on each point with its switch states.
    switch_rules: Vec<&'static Constraint>,
    /// Every switch of the kernel in its published state.
    published: Vec<(&'static str, bool)>,
    /// Where the compiler ignores a cap with USE_BOUNDS on: its axis among the
    /// others (`None`: not searched) and its published state.
    bounds: Option<(Option<usize>, bool)>,
}

/// Why a switch and cap combination is removed for its cap.
enum CapDrop {
    /// The compiler ignores the cap (USE_BOUNDS on).
    Ignored,
    /// At or below the work-item's accumulators.
    Starved,
    /// Cap x work-group size beyond the device's register file.
    TooSmall,
}

/// How many switch and cap combinations each rule removed.
#[derive(Debug, Clone, Default)]
struct Dropped {
    too_small: u64,
    ignored: u64,
    starved: u64,
    /// Per `PointRules::switch_rules`.
    broken: Vec<u64>,
}

impl<'a> PointRules<'a> {
    fn new(kernel: Kernel, device: &'a DeviceInfo, axes: &'a [Axis]) -> PointRules<'a> {
        let toolchain = device.toolchain;
        let switches: &'static [SwitchUse] = kernel.builtin().map_or(&[], |b| b.switches);
        let n_param = axes
            .iter()
            .filter(|a| matches!(a, Axis::Param { .. }))
            .count();
        let param_sizes: Vec<usize> = axes[..n_param].iter().map(Axis::len).collect();
        let other_sizes: Vec<usize> = axes[n_param..].iter().map(Axis::len).collect();
        let cap_axis = axes.len() - 1;
        let cap_values: &[Option<u32>] = match &axes[cap_axis] {
            Axis::Cap { values } => values,
            _ => &[],
        };
        let switch_names: Vec<&str> = switches.iter().map(|s| s.name()).collect();
        let switch_rules: Vec<&'static Constraint> = kernel
            .builtin()
            .map(|k| k.constraints)
            .unwrap_or_default()
            .iter()
            .filter(|c| c.involves.iter().any(|n| switch_names.contains(n)))
            .collect();
        let n_caps = cap_values.len().max(1);
        // Where the compiler ignores a cap on a kernel with a fixed work-group size,
        // a capped point with USE_BOUNDS on is the uncapped kernel under another label.
        let bounds = switches
            .iter()
            .find(|s| s.name() == USE_BOUNDS.name)
            .filter(|_| device.ignores_caps_with_bounds() && n_caps > 1)
            .map(|s| {
                let axis = axes[n_param..].iter().position(
                    |a| matches!(a, Axis::Switch { name, .. } if name == USE_BOUNDS.name),
                );
                (axis, s.published(toolchain))
            });
        PointRules {
            kernel,
            device,
            axes,
            n_param,
            param_strides: strides(&param_sizes),
            other_coords: product(&other_sizes),
            cap_at: cap_axis - n_param,
            cap_values,
            n_caps,
            switch_rules,
            published: (switches.iter())
                .map(|s| (s.name(), s.published(toolchain)))
                .collect(),
            bounds,
        }
    }

    /// The size of the product of the axes after the parameters.
    fn others(&self) -> u64 {
        self.other_coords.len() as u64
    }

    /// Judges every valid parameter point on every core. Each keeps the list of
    /// its valid switch and cap combinations, shared by every point whose list is
    /// the same (`Grid::from_blocks`): the blocks (point, list), the lists, and
    /// what each rule removed.
    fn judge(&self, valid: &[u64]) -> (Vec<(u64, u32)>, Vec<Vec<u32>>, Dropped) {
        let chunks = chunked(valid.len());
        let parts = crate::gemm::parallel::map_range(chunks.len(), |ci| {
            let mut dropped = Dropped {
                broken: vec![0; self.switch_rules.len()],
                ..Dropped::default()
            };
            let mut blocks: Vec<(u64, u32)> = Vec::new();
            let mut lists = Interned::default();
            for &pk in &valid[chunks[ci].clone()] {
                let list = self.kept(pk, &mut dropped);
                blocks.push((pk, lists.id(list)));
            }
            (blocks, lists.lists, dropped)
        });
        let mut blocks: Vec<(u64, u32)> = Vec::new();
        let mut classes = Interned::default();
        let mut dropped = Dropped {
            broken: vec![0; self.switch_rules.len()],
            ..Dropped::default()
        };
        for (chunk_blocks, lists, d) in parts {
            let global: Vec<u32> = lists.into_iter().map(|l| classes.id(l)).collect();
            blocks.extend(
                chunk_blocks
                    .into_iter()
                    .map(|(pk, c)| (pk, global[c as usize])),
            );
            dropped.add(d);
        }
        (blocks, classes.lists, dropped)
    }

    /// The switch and cap combinations (offsets into `other_coords`) parameter
    /// point `pk` keeps; those removed are counted in `dropped`.
    fn kept(&self, pk: u64, dropped: &mut Dropped) -> Vec<u32> {
        let mut list: Vec<u32> = Vec::new();
        let pc = decode(&self.param_strides, pk);
        let config = config_of(self.axes, &pc);
        let threads = self.kernel.threads_per_group(&config) as u64;
        let held = accumulator_registers(&self.kernel, &config);
        let combo_ok = self.switch_combos_ok(&config, &mut dropped.broken);
        for (oi, oc) in self.other_coords.iter().enumerate() {
            if !combo_ok.is_empty() && !combo_ok[oi / self.n_caps] {
                continue;
            }
            match self.cap_drop(oc, held, threads) {
                Some(CapDrop::Ignored) => dropped.ignored += 1,
                Some(CapDrop::Starved) => dropped.starved += 1,
                Some(CapDrop::TooSmall) => dropped.too_small += 1,
                None => list.push(oi as u32),
            }
        }
        list
    }

    /// Whether each combination of switch states keeps the constraints that involve
    /// a switch (once each: the cap, the last axis, varies fastest and plays no part
    /// in these rules), counting the breaks per rule; empty where there are none.
    fn switch_combos_ok(&self, config: &Config, broken: &mut [u64]) -> Vec<bool> {
        if self.switch_rules.is_empty() {
            return Vec::new();
        }
        let mut c = config.clone();
        for (name, on) in &self.published {
            c.0.insert((*name).to_string(), i64::from(*on));
        }
        let others = &self.axes[self.n_param..];
        (0..self.other_coords.len() / self.n_caps)
            .map(|combo| {
                set_switches(&mut c, others, &self.other_coords[combo * self.n_caps]);
                let bad = self.switch_rules.iter().position(|k| !(k.holds)(&c));
                if let Some(r) = bad {
                    broken[r] += self.n_caps as u64;
                }
                bad.is_none()
            })
            .collect()
    }

    /// Why the cap of combination `oc` is removed, if it is, for a point whose
    /// work-items hold `held` registers of sums in work-groups of `threads`.
    fn cap_drop(&self, oc: &[u8], held: u64, threads: u64) -> Option<CapDrop> {
        let cap = self
            .cap_values
            .get(oc[self.cap_at] as usize)
            .copied()
            .flatten();
        if cap.is_some() && self.bounds_on(oc) {
            return Some(CapDrop::Ignored);
        }
        if cap.is_some_and(|cap| u64::from(cap) <= held) {
            return Some(CapDrop::Starved);
        }
        if let (Some(cap), Some(file)) = (cap, self.device.registers_per_block) {
            if u64::from(cap) * threads > u64::from(file) {
                return Some(CapDrop::TooSmall);
            }
        }
        None
    }

    /// Whether combination `oc` has USE_BOUNDS on, where the compiler then ignores caps.
    fn bounds_on(&self, oc: &[u8]) -> bool {
        match self.bounds {
            None => false,
            Some((None, published)) => published,
            Some((Some(i), _)) => match &self.axes[self.n_param + i] {
                Axis::Switch { values, .. } => values[oc[i] as usize],
                _ => false,
            },
        }
    }
}

impl Dropped {
    fn add(&mut self, other: Dropped) {
        self.too_small += other.too_small;
        self.ignored += other.ignored;
        self.starved += other.starved;
        for (sum, x) in self.broken.iter_mut().zip(other.broken) {
            *sum += x;
        }
    }

    /// Adds what each rule removed to `removals`, switch constraints first.
    fn blame(self, switch_rules: &[&Constraint], device: &DeviceInfo, removals: &mut Vec<Removal>) {
        for (rule, n) in switch_rules.iter().zip(self.broken) {
            if n > 0 {
                blame(
                    removals,
                    format!("constraint: {}", rule.message),
                    u128::from(n),
                );
            }
        }
        if self.starved > 0 {
            blame(
                removals,
                "cap: at or below a work-item's accumulators (its elements of C, in 32-bit registers), which then spill, or the compiler ignores the cap".into(),
                u128::from(self.starved),
            );
        }
        if self.ignored > 0 {
            blame(
                removals,
                format!(
                    "compiler: {} ignores register caps on kernels with reqd_work_group_size (USE_BOUNDS on)",
                    device.platform
                ),
                u128::from(self.ignored),
            );
        }
        if self.too_small > 0 {
            if let Some(file) = device.registers_per_block {
                blame(
                    removals,
                    format!("device limit: cap x work-group size exceeds the {file} registers a work-group may use"),
                    u128::from(self.too_small),
                );
            }
        }
    }
}

/// The 32-bit registers a work-item of a built-in kernel needs for its elements of
/// C alone (two per element in f64); 0 for a user's kernel, whose layout is unknown.
/// Measured on the H200 (random SIMT search, 150 s): of 850 points capped at or
/// below this, 441 spilled and the other 409 used more registers than the cap (the
/// compiler ignored it), and they took the longest builds (1.13 s against 0.78).
fn accumulator_registers(kernel: &Kernel, c: &Config) -> u64 {
    let Some(spec) = kernel.builtin() else {
        return 0;
    };
    let (px, py) = (spec.launch.per_item)(c);
    let words = match spec.precision_of(c) {
        Precision::F64 => 2,
        Precision::F32 => 1,
    };
    // Slice-K's groups of work-items hold the same elements' sums, each spanning
    // 1/SLICEK of the elements' columns of the launch grid.
    let slices = c.get("SLICEK").max(1) as usize;
    (px * py * slices * words) as u64
}

/// Sets a point's switch states as 0/1 values in `c`, for the constraints that
/// involve switches: those of the space's switch axes from `coords` (the
/// coordinates of `others`, the axes after the parameters).
fn set_switches(c: &mut Config, others: &[Axis], coords: &[u8]) {
    for (a, &i) in others.iter().zip(coords) {
        if let Axis::Switch { name, values } = a {
            if let Some(v) = c.0.get_mut(name) {
                *v = i64::from(values[i as usize]);
            }
        }
    }
}

fn config_of(axes: &[Axis], coords: &[u8]) -> Config {
    Config(
        axes.iter()
            .zip(coords)
            .filter_map(|(a, &i)| match a {
                Axis::Param { name, values } => Some((name.clone(), values[i as usize])),
                _ => None,
            })
            .collect(),
    )
}

/// A parameter as the space sees it, whichever kind of kernel declares it.
struct ParamView {
    name: String,
    default: i64,
    allowed: Vec<i64>,
    meaning: String,
}

fn params_of(kernel: Kernel) -> Vec<ParamView> {
    match kernel {
        Kernel::Builtin(spec) => spec
            .params
            .iter()
            .map(|p| ParamView {
                name: p.name.to_string(),
                default: p.default,
                allowed: p.allowed.to_vec(),
                meaning: p.meaning.to_string(),
            })
            .collect(),
        Kernel::User(k) => k
            .params
            .iter()
            .map(|p| ParamView {
                name: p.name.clone(),
                default: p.default,
                allowed: p.values.clone(),
                meaning: p.meaning.clone(),
            })
            .collect(),
    }
}

/// A rule a parameter configuration breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Broken {
    Constraint(std::borrow::Cow<'static, str>),
    WorkGroup(u64),
    LocalMemory(u64),
}

impl Broken {
    fn describe(&self) -> String {
        match self {
            Broken::Constraint(m) => format!("constraint: {m}"),
            Broken::WorkGroup(max) => {
                format!("device limit: work-group larger than the device's {max} work-items")
            }
            Broken::LocalMemory(local) => format!(
                "device limit: local tiles larger than the device's {local} bytes of local memory"
            ),
        }
    }
}

/// The first rule a parameter configuration breaks: a registry constraint (its
/// message) or a device limit.
fn param_rule(kernel: Kernel, device: &DeviceInfo, c: &Config) -> Option<Broken> {
    match kernel {
        Kernel::Builtin(spec) => {
            if let Some(k) = spec.constraints.iter().find(|k| !(k.holds)(c)) {
                return Some(Broken::Constraint(k.message.into()));
            }
        }
        Kernel::User(k) => {
            if let Some(m) = k.param_violation(c) {
                return Some(Broken::Constraint(m.into()));
            }
        }
    }
    let threads = kernel.threads_per_group(c) as u64;
    if let Some(max) = device.max_work_group_size {
        if threads > max {
            return Some(Broken::WorkGroup(max));
        }
    }
    let local = kernel.builtin().map(|spec| {
        let at_launch = spec.takes_local_at_launch(device.toolchain.language());
        ((spec.local_bytes)(c), device.local_limit(at_launch))
    });
    if let Some((used, Some(local))) = local {
        if used as u64 > local {
            return Some(Broken::LocalMemory(local));
        }
    }
    None
}

/// The parameter configurations that break no rule (as positions in the product
/// of the parameter axes, in order), and how many broke each rule first (rules in
/// the order a sequential walk meets them).
struct Filtered {
    valid: Vec<u64>,
    broken: Vec<(Broken, u64)>,
}

/// Walks the product of the parameter axes on every core: each thread takes a
/// run of positions and updates one configuration in place as its odometer
/// turns (a space of millions of configurations is filtered in a second, not
/// rebuilt value by value).
fn filter_params(
    axes: &[(&str, &Vec<i64>)],
    sizes: &[usize],
    rule: impl Fn(&mut Config) -> Option<Broken> + Sync,
) -> Filtered {
    let total: u64 = sizes.iter().map(|&s| s as u64).product();
    let strides = strides(sizes);
    let runs = chunked(total as usize);
    let parts = crate::gemm::parallel::map_range(runs.len(), |ri| {
        let run = runs[ri].clone();
        let (mut valid, mut broken): (Vec<u64>, Vec<(Broken, u64)>) = (Vec::new(), Vec::new());
        if run.is_empty() {
            return (valid, broken);
        }
        let mut coords = decode(&strides, run.start as u64);
        let mut config = Config(
            axes.iter()
                .zip(&coords)
                .map(|((n, v), &i)| (n.to_string(), v[i as usize]))
                .collect(),
        );
        for pos in run {
            match rule(&mut config) {
                None => valid.push(pos as u64),
                Some(b) => match broken.iter_mut().find(|(r, _)| *r == b) {
                    Some((_, n)) => *n += 1,
                    None => broken.push((b, 1)),
                },
            }
            // The next position: the last axis turns fastest, carrying leftwards.
            for d in (0..coords.len()).rev() {
                coords[d] += 1;
                let wrapped = coords[d] as usize == sizes[d];
                if wrapped {
                    coords[d] = 0;
                }
                let (name, values) = axes[d];
                if let Some(v) = config.0.get_mut(name) {
                    *v = values[coords[d] as usize];
                }
                if !wrapped {
                    break;
                }
            }
        }
        (valid, broken)
    });
    let mut out = Filtered {
        valid: Vec::new(),
        broken: Vec::new(),
    };
    for (valid, broken) in parts {
        out.valid.extend(valid);
        for (b, n) in broken {
            match out.broken.iter_mut().find(|(r, _)| *r == b) {
                Some((_, m)) => *m += n,
                None => out.broken.push((b, n)),
            }
        }
    }
    out
}

/// `n` items cut into runs for the cores (a few per core, so uneven runs even out).
/// Lists of offsets kept once each, named by index. Neighbouring parameter points
/// mostly share a list, so the last one is compared before any hashing.
#[derive(Default)]
struct Interned {
    ids: HashMap<Vec<u32>, u32>,
    lists: Vec<Vec<u32>>,
    last: Option<u32>,
}

impl Interned {
    fn id(&mut self, list: Vec<u32>) -> u32 {
        if let Some(last) = self.last.filter(|&l| self.lists[l as usize] == list) {
            return last;
        }
        let id = match self.ids.get(&list) {
            Some(&id) => id,
            None => {
                let id = self.lists.len() as u32;
                self.ids.insert(list.clone(), id);
                self.lists.push(list);
                id
            }
        };
        self.last = Some(id);
        id
    }
}

fn chunked(n: usize) -> Vec<std::ops::Range<usize>> {
    let pieces = (crate::gemm::parallel::threads() * 4).min(n).max(1);
    let per = n.div_ceil(pieces).max(1);
    (0..n)
        .step_by(per)
        .map(|lo| lo..(lo + per).min(n))
        .collect()
}

/// Every coordinate vector of a product of dimension sizes, in order.
fn product(sizes: &[usize]) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    for &s in sizes {
        let mut next = Vec::with_capacity(out.len() * s);
        for p in &out {
            for v in 0..s {
                let mut q = p.clone();
                q.push(v as u8);
                next.push(q);
            }
        }
        out = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::DeviceKind;
    use crate::kernel::builtin as kernels;

    fn device(toolchain: Toolchain, nvidia: bool) -> DeviceInfo {
        let (name, vendor, platform) = if nvidia {
            ("NVIDIA H200", "NVIDIA Corporation", "NVIDIA CUDA")
        } else {
            ("cpu-pthread", "GenuineIntel", "Portable Computing Language")
        };
        DeviceInfo {
            local_mem_bytes: Some(48 * 1024),
            max_work_group_size: Some(1024),
            registers_per_block: Some(65536),
            ..DeviceInfo::new(toolchain, "x:0", name, vendor, platform, DeviceKind::Gpu)
        }
    }

    /// A request's `values` holding each named parameter at one value.
    fn fixed(pairs: &[(&str, i64)]) -> BTreeMap<String, Vec<i64>> {
        (pairs.iter())
            .map(|&(name, v)| (name.to_string(), vec![v]))
            .collect()
    }

    #[test]
    fn every_point_is_valid_and_round_trips() {
        let spec = kernels::find("gemm6").unwrap();
        let d = device(Toolchain::Cuda, true);
        let s = Space::build(spec, &d, &SpaceRequest::default()).unwrap();
        assert!(
            s.len() > 100 && (s.len() as u128) < s.before,
            "{}",
            s.summary()
        );
        let removed: u128 = s.removals.iter().map(|r| r.removed).sum();
        assert_eq!(removed + s.len() as u128, s.before);
        for i in (0..s.len()).step_by(97) {
            let c = s.candidate(i);
            spec.validate(&c.config).unwrap();
            assert_eq!(s.find(&c), Some(i));
            if let Some(cap) = c.hints.max_registers {
                assert!(u64::from(cap) * spec.threads_per_group(&c.config) as u64 <= 65536);
            }
        }
        // Point 0 is the published state of every switch, without a cap.
        let first = s.candidate(0);
        assert!(first.hints.switches.is_empty() && first.hints.max_registers.is_none());
    }

    /// A constraint that involves a switch removes exactly the points whose switch
    /// states break it (simt's two K-major operands with cp.async's 16-byte copies alone,
    /// its copies along K without an operand along K; kernel 8's shuffle
    /// segments), and says so; points with the switch off stay.
    #[test]
    fn constraints_on_switches_are_judged_with_each_points_states() {
        let d = device(Toolchain::Cuda, true);
        // The axes the rules read (operand layouts, tiles, stages, switches) in full;
        // the grid's and K's sharing at one value each, to keep the space small.
        let request = SpaceRequest {
            values: fixed(&[("GROUP", 8), ("SPLITK", 1), ("STREAMK", 0)]),
            caps: Some(Vec::new()),
            ..Default::default()
        };
        let simt = kernels::find("simt").unwrap();
        let s = Space::build(simt, &d, &request).unwrap();
        let (mut kmajor_off, mut kmajor_plain, mut mixed) = (0, 0, 0);
        for i in (0..s.len()).step_by(101) {
            let c = s.candidate(i);
            let kmajor = c.config.get("KMAJOR_A") + c.config.get("KMAJOR_B");
            let async_copy = c.hints.switch("ASYNC_COPY") == Some(true);
            // Both along K with cp.async only where it copies along K too, and that
            // switch only with cp.async and an operand along K.
            let along_k = c.hints.switch("ASYNC_ALONG_K") == Some(true);
            let ktile = c.hints.switch("KTILE_B") == Some(true);
            assert!(
                kmajor != 2 || !async_copy || along_k || ktile,
                "{}",
                c.describe()
            );
            assert!(!along_k || (async_copy && kmajor > 0), "{}", c.describe());
            // B kept along K only where B is read along K, never with the 4-byte copies.
            assert!(
                !ktile || (c.config.get("KMAJOR_B") == 1 && !along_k),
                "{}",
                c.describe()
            );
            match (kmajor, async_copy) {
                (0, true) => kmajor_off += 1,
                (1, true) => mixed += 1,
                (1.., false) => kmajor_plain += 1,
                _ => {}
            }
            if c.hints.switch("SMEM_PAD") == Some(true) {
                let g = |n| c.config.get(n);
                assert!(4 * g("STAGES") * g("BK") * (g("BM") + g("BN") + 8) <= 48 * 1024);
            }
        }
        assert!(kmajor_off > 0 && kmajor_plain > 0 && mixed > 0);
        assert!(s
            .removals
            .iter()
            .any(|r| r.rule.contains("together need ASYNC_COPY off")));
        let removed: u128 = s.removals.iter().map(|r| r.removed).sum();
        assert_eq!(removed + s.len() as u128, s.before);

        let k8 = kernels::find("gemm8").unwrap();
        let request = SpaceRequest {
            caps: Some(Vec::new()),
            ..Default::default()
        };
        let s = Space::build(k8, &d, &request).unwrap();
        assert!(s
            .removals
            .iter()
            .any(|r| r.rule.contains("USE_SHUFFLE=1 needs")));
        for i in (0..s.len()).step_by(7) {
            let c = s.candidate(i);
            if c.hints.switch("USE_SHUFFLE") == Some(true) {
                let wptn = c.config.get("WPTN");
                assert!(wptn <= 32 && wptn & (wptn - 1) == 0, "{}", c.describe());
            }
        }
    }

    /// NVIDIA's OpenCL compiler ignores a cap on a kernel with reqd_work_group_size:
    /// such points leave its space (said so), capped points without the bounds stay,
    /// and CUDA keeps both.
    /// The tensor-core kernel's CUDA twin takes its tiles at launch: on CUDA the
    /// space keeps pipelines past 48 KiB up to the device's opt-in limit, in OpenCL
    /// (tiles declared) it stops at 48 KiB, and each removal says which limit.
    #[test]
    fn local_memory_is_limited_by_what_each_twin_can_take() {
        let spec = kernels::find("tc").unwrap();
        // The tile and pipeline axes (what local memory depends on) in full; the rest
        // at their defaults, so the test enumerates thousands of points, not millions.
        let request = SpaceRequest {
            values: fixed(&[
                ("GROUP", 8),
                ("PROMOTE_STAGE", 0),
                ("SPLIT", 0),
                ("SPLITK", 1),
                ("TAILK", 1),
                ("WAVE", 2),
            ]),
            switches: Some(Vec::new()),
            caps: Some(Vec::new()),
            ..Default::default()
        };
        let largest = |s: &Space| {
            (0..s.len())
                .map(|i| (spec.local_bytes)(&s.candidate(i).config))
                .max()
                .unwrap()
        };
        let cuda = DeviceInfo {
            local_mem_launch_bytes: Some(227 * 1024),
            compute_capability: Some((9, 0)),
            ..device(Toolchain::Cuda, true)
        };
        let s = Space::build(spec, &cuda, &request).unwrap();
        let most = largest(&s);
        assert!(most > 48 * 1024 && most <= 227 * 1024, "{most}");
        assert!(s.removals.iter().any(|r| r.rule.contains("232448 bytes")));
        let ocl = DeviceInfo {
            compute_capability: Some((9, 0)),
            ..device(Toolchain::OpenCl, true)
        };
        let s = Space::build(spec, &ocl, &request).unwrap();
        assert!(largest(&s) <= 48 * 1024);
        assert!(s.removals.iter().any(|r| r.rule.contains("49152 bytes")));
    }

    #[test]
    fn nvidia_opencl_has_no_caps_where_the_work_group_size_is_fixed() {
        // One tile of xgemm's (the rule is about caps and a switch, not tiles).
        let request = SpaceRequest {
            values: fixed(&[
                ("MWG", 64),
                ("NWG", 64),
                ("KWG", 16),
                ("STRM", 0),
                ("STRN", 0),
            ]),
            caps: Some(vec![128]),
            switches: Some(vec!["USE_BOUNDS".into()]),
            ..Default::default()
        };
        let spec = kernels::find("xgemm").unwrap();
        let count = |s: &Space| {
            let (mut bounded, mut free) = (0, 0);
            for i in 0..s.len() {
                let c = s.candidate(i);
                if c.hints.max_registers.is_some() {
                    if c.hints.switch("USE_BOUNDS") == Some(false) {
                        free += 1;
                    } else {
                        bounded += 1;
                    }
                }
            }
            (bounded, free)
        };
        let ocl = Space::build(spec, &device(Toolchain::OpenCl, true), &request).unwrap();
        let (bounded, free) = count(&ocl);
        assert_eq!(bounded, 0);
        assert!(free > 0);
        assert!(ocl.removals.iter().any(|r| r
            .rule
            .contains("ignores register caps on kernels with reqd_work_group_size")));
        let removed: u128 = ocl.removals.iter().map(|r| r.removed).sum();
        assert_eq!(removed + ocl.len() as u128, ocl.before);
        let cuda = Space::build(spec, &device(Toolchain::Cuda, true), &request).unwrap();
        let (bounded, free) = count(&cuda);
        assert!(bounded > 0 && free > 0);
        // With USE_BOUNDS not searched (on, as published), OpenCL gets no capped point.
        let fixed = SpaceRequest {
            switches: Some(Vec::new()),
            ..request
        };
        let ocl = Space::build(spec, &device(Toolchain::OpenCl, true), &fixed).unwrap();
        assert_eq!(count(&ocl), (0, 0));
    }

    /// A cap at or below a work-item's elements of C (SIMT: TM*TN) leaves the space,
    /// said so; caps above them stay.
    #[test]
    fn caps_at_or_below_the_accumulators_leave_the_space() {
        let d = device(Toolchain::Cuda, true);
        // The thread tile (the accumulators) in full, the rest narrowed.
        let request = SpaceRequest {
            values: fixed(&[("GROUP", 8), ("SPLITK", 1), ("STREAMK", 0), ("STAGES", 3)]),
            caps: Some(vec![32, 64, 128]),
            switches: Some(Vec::new()),
            ..Default::default()
        };
        let simt = kernels::find("simt").unwrap();
        let s = Space::build(simt, &d, &request).unwrap();
        let mut capped = 0;
        for i in (0..s.len()).step_by(53) {
            let c = s.candidate(i);
            if let Some(cap) = c.hints.max_registers {
                capped += 1;
                assert!(
                    i64::from(cap) > c.config.get("TM") * c.config.get("TN"),
                    "{}",
                    c.describe()
                );
            }
        }
        assert!(capped > 0);
        assert!(s
            .removals
            .iter()
            .any(|r| r.rule.starts_with("cap: at or below")));
    }

    #[test]
    fn pocl_has_no_caps_and_no_nvidia_switches() {
        let spec = kernels::find("gemm8").unwrap();
        let d = device(Toolchain::OpenCl, false);
        let s = Space::build(spec, &d, &SpaceRequest::default()).unwrap();
        assert!(s
            .axes
            .iter()
            .all(|a| a.name() != "USE_LDG" && a.name() != "USE_SHUFFLE"));
        assert!(matches!(s.axes.last(), Some(Axis::Cap { values }) if values == &vec![None]));
        assert!(s.notes.iter().any(|n| n.contains("USE_SHUFFLE")));
        let e = Space::build(
            spec,
            &d,
            &SpaceRequest {
                caps: Some(vec![64]),
                ..Default::default()
            },
        );
        assert!(e.unwrap_err().to_string().contains("register-cap"));
    }

    #[test]
    fn all_switches_keep_the_precision_and_a_named_one_is_searched() {
        let spec = kernels::find("tc").unwrap();
        let d = device(Toolchain::Cuda, true);
        let mut r = SpaceRequest::default();
        for (name, v) in spec.defaults().0.iter().filter(|(n, _)| *n != "PRECISION") {
            r.values.insert(name.clone(), vec![*v]);
        }
        let names = |r: &SpaceRequest| -> Vec<String> {
            let s = Space::build(spec, &d, r).unwrap();
            s.axes.iter().map(|a| a.name().to_string()).collect()
        };
        let all = names(&r);
        assert!(all.iter().any(|n| n == "USE_BOUNDS"), "{all:?}");
        assert!(
            !all.iter().any(|n| n == "TF32_SINGLE" || n == "PROMOTE_ACC"),
            "{all:?}"
        );
        let s = Space::build(spec, &d, &r).unwrap();
        assert!(s
            .notes
            .iter()
            .any(|n| n.contains("TF32_SINGLE") && n.contains("precision")));
        r.switches = Some(vec!["TF32_SINGLE".into()]);
        assert!(names(&r).iter().any(|n| n == "TF32_SINGLE"));
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let spec = kernels::find("gemm6").unwrap();
        let d = device(Toolchain::Cuda, true);
        let mut r = SpaceRequest::default();
        r.values.insert("BOGUS".into(), vec![1]);
        let e = Space::build(spec, &d, &r).unwrap_err().to_string();
        assert!(e.contains("BOGUS") && e.contains("TSM"), "{e}");
        let mut r = SpaceRequest::default();
        r.values.insert("TSM".into(), vec![100]);
        let e = Space::build(spec, &d, &r).unwrap_err().to_string();
        assert!(e.contains("TSM must be one of"), "{e}");
        let r = SpaceRequest {
            switches: Some(vec!["NOPE".into()]),
            ..Default::default()
        };
        assert!(Space::build(spec, &d, &r)
            .unwrap_err()
            .to_string()
            .contains("NOPE"));
        // TSM = 16 with TSN = 256 breaks "TSM must equal TSN": nothing is left, and the error says so.
        let mut r = SpaceRequest::default();
        r.values.insert("TSM".into(), vec![16]);
        r.values.insert("TSN".into(), vec![256]);
        let e = Space::build(spec, &d, &r).unwrap_err().to_string();
        assert!(
            e.contains("empty") && e.contains("TSM must equal TSN"),
            "{e}"
        );
    }
}
