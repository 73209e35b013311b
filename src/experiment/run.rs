//! What every measuring command does around its experiment, written once: the
//! devices and clocks said aloud, the environment recorded, the result writer
//! opened (and `--keep-ptx` set up); at the end, every row written and counted,
//! even when the experiment stopped early.

use std::path::Path;

use crate::backend::Backend;
use crate::error::Result;
use crate::gemm::driver::Session;
use crate::measure::clocks::Monitor;
use crate::measure::progress::Progress;
use crate::measure::{CacheState, Plan};
use crate::results::{Environment, Measurement, ResultWriter};
use crate::util::words::plural;

/// How a measuring run is recorded.
pub struct Recording<'a> {
    /// Where its rows go.
    pub out: &'a Path,
    pub seed: u64,
    pub plan: Plan,
    /// What the run is, for the environment's notes ("sweep registers").
    pub note: Option<String>,
    /// `--keep-ptx`: every session keeps its PTX under OUT/ptx.
    pub keep_ptx: bool,
}

impl Recording<'_> {
    /// Says which devices, clocks, seed and method the run uses, records them
    /// and opens the writer.
    pub fn start(&self, sessions: &mut [Session]) -> Result<ResultWriter> {
        let infos: Vec<_> = sessions
            .iter()
            .map(|s| s.backend.borrow().info().clone())
            .collect();
        say_devices(sessions);
        println!(
            "seed {}, {}, {} cache, results in {}",
            self.seed,
            self.plan.describe(),
            match self.plan.cache {
                CacheState::Cold => "cold",
                CacheState::Warm => "warm",
            },
            self.out.display()
        );
        let mut env = Environment::capture(infos, self.seed, self.plan);
        env.notes.extend(self.note.clone());
        env.record_clocks(sessions);
        // A restarted child of a supervised run: the files there are this run's own.
        let writer = match super::isolate::restarted() {
            true => {
                let kept = super::isolate::remember_earlier(&self.out.join("measurements.jsonl"));
                let kept = plural(kept, "row");
                println!("restarted: {kept} measured before kept, not measured again");
                ResultWriter::create_resumed(self.out, env)?
            }
            false => ResultWriter::create(self.out, env)?,
        };
        if self.keep_ptx {
            for s in sessions.iter_mut() {
                s.keep_ptx = Some(self.out.join(crate::results::ptx_archive::DIR));
            }
        }
        Ok(writer)
    }

    /// Ends the run: what was measured is written and counted even when the
    /// experiment stopped early (`result`), whose error then comes back.
    pub fn finish(
        &self,
        writer: ResultWriter,
        progress: &Progress,
        result: Result<()>,
    ) -> Result<Vec<Measurement>> {
        progress.finish_and_clear();
        let all = writer.finish()?;
        println!(
            "wrote {} to {}",
            plural(all.len(), "measurement"),
            self.out.display()
        );
        result.map(|_| all)
    }
}

/// Says which device each session runs on, through which toolchain and
/// compiler, and each GPU's clocks now.
pub fn say_devices(sessions: &[Session]) {
    for s in sessions {
        let be = s.backend.borrow();
        let d = be.info();
        println!(
            "device: {} via {} ({}; {})",
            d.name,
            d.toolchain,
            d.id,
            d.compiler_version
                .as_deref()
                .unwrap_or("compiler version unknown")
        );
    }
    print_clocks(sessions);
}

/// One line per GPU with its clocks now (sessions on one GPU share the line),
/// or the note why a session has no clock readings.
pub fn print_clocks(sessions: &[Session]) {
    let mut shown: Vec<&Monitor> = Vec::new();
    for s in sessions {
        match (&s.monitor, &s.monitor_note) {
            (Some(m), _) if shown.iter().any(|x| x.same_gpu(m)) => {}
            (Some(m), _) => {
                shown.push(m);
                let name = s.backend.borrow().info().name.clone();
                println!(
                    "clocks at start, {name} ({}): {}",
                    m.describe(),
                    m.read().describe()
                );
            }
            (None, Some(note)) => println!("clocks: {note}"),
            (None, None) => {}
        }
    }
}
