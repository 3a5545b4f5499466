//! The stable runner: drives a target for a bounded time with inputs from
//! [`Mutator`], on any toolchain.
//!
//! It first runs every seed as it is (each must pass), then mutated inputs
//! until the time is up. A panic in the code under test, on any thread of
//! the target's, is caught; the input is written to
//! `artifacts/<target>/crash-<hash>` and the run stops there. An input that
//! runs longer than the timeout is written as `timeout-<hash>` and the
//! process aborts, as libFuzzer does. The [`Report`] says how many inputs
//! ran, and fails a run with fewer than the target's stated minimum.

use std::fmt;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use crate::corpus;
use crate::mutate::Mutator;
use crate::panics;
use crate::targets::Target;

/// How a run goes.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long to run mutated inputs (after the fixture is built).
    pub duration: Duration,
    /// The mutator's seed: the same seed makes the same inputs.
    pub seed: u64,
    /// How long one input may run before it counts as a hang.
    pub exec_timeout: Duration,
}

impl Options {
    /// The options from the environment: `TOOLHOST_FUZZ_SECS` (default 60
    /// when `CI=true`, else 10), `TOOLHOST_FUZZ_SEED` (default: the clock)
    /// and `TOOLHOST_FUZZ_TIMEOUT` (seconds per input, default 60).
    pub fn from_env() -> Self {
        let number = |name: &str| {
            std::env::var(name).ok().map(|v| {
                v.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite() && *n >= 0.0)
                    .unwrap_or_else(|| panic!("{name}={v:?} is not a number of seconds"))
            })
        };
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        let secs = number("TOOLHOST_FUZZ_SECS").unwrap_or(if ci { 60.0 } else { 10.0 });
        let seed = std::env::var("TOOLHOST_FUZZ_SEED").map_or_else(
            |_| clock_seed(),
            |v| {
                v.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("TOOLHOST_FUZZ_SEED={v:?} is not a number"))
            },
        );
        Self {
            duration: Duration::from_secs_f64(secs),
            seed,
            exec_timeout: Duration::from_secs_f64(number("TOOLHOST_FUZZ_TIMEOUT").unwrap_or(60.0)),
        }
    }
}

fn clock_seed() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// What a run did.
#[derive(Debug)]
pub struct Report {
    /// The target run.
    pub target: &'static str,
    /// Inputs run (seeds included).
    pub execs: u64,
    /// Time spent running inputs, after the fixture was built.
    pub elapsed: Duration,
    /// Time the first input took, fixture included.
    pub setup: Duration,
    /// The fewest inputs the run had to reach.
    pub min_execs: u64,
    /// The mutator's seed.
    pub seed: u64,
    /// The input that broke the target, if one did.
    pub crash: Option<Crash>,
    /// How long the slowest input took, and where it was written if it
    /// took longer than [`SLOW`].
    pub slowest: (Duration, Option<PathBuf>),
}

/// An input slower than this is written as `artifacts/<target>/slow-<hash>`
/// (the slowest of a run only), to look into.
pub const SLOW: Duration = Duration::from_secs(5);

/// An input that broke a target.
#[derive(Debug)]
pub struct Crash {
    /// Where the input was written.
    pub artifact: PathBuf,
    /// What broke.
    pub message: String,
}

impl Report {
    /// Inputs per second.
    pub fn execs_per_sec(&self) -> f64 {
        self.execs as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Whether nothing broke and enough inputs ran.
    pub fn passed(&self) -> bool {
        self.crash.is_none() && self.execs >= self.min_execs
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fuzz {}: {} executions in {:.1} s ({:.1}/s, minimum {}; setup {:.1} s, slowest {} ms; seed {})",
            self.target,
            self.execs,
            self.elapsed.as_secs_f64(),
            self.execs_per_sec(),
            self.min_execs,
            self.setup.as_secs_f64(),
            self.slowest.0.as_millis(),
            self.seed
        )?;
        if let Some(path) = &self.slowest.1 {
            write!(f, " (written to {})", path.display())?;
        }
        match &self.crash {
            Some(crash) => write!(
                f,
                ": CRASH, input written to {}: {}",
                crash.artifact.display(),
                crash.message
            ),
            None if self.execs < self.min_execs => write!(f, ": TOO FEW executions"),
            None => write!(f, ": ok"),
        }
    }
}

/// Run `target` as `options` say, on a thread named after it.
pub fn run(target: &'static Target, options: &Options) -> io::Result<Report> {
    panics::install();
    let options = options.clone();
    std::thread::Builder::new()
        .name(format!("fuzz-{}-runner", target.name))
        .spawn(move || run_here(target, &options))?
        .join()
        .unwrap_or_else(|payload| std::panic::resume_unwind(payload))
}

fn run_here(target: &'static Target, options: &Options) -> io::Result<Report> {
    let seeds = corpus::seeds(target)?;
    let mut mutator = Mutator::new(target, seeds.clone(), options.seed);
    let watchdog = Watchdog::start(target.name, options.exec_timeout)?;
    let mut report = Report {
        target: target.name,
        execs: 0,
        elapsed: Duration::ZERO,
        setup: Duration::ZERO,
        min_execs: (target.min_execs_per_sec * options.duration.as_secs_f64()) as u64,
        seed: options.seed,
        crash: None,
        slowest: (Duration::ZERO, None),
    };
    let mut slowest_input = Vec::new();
    let started = Instant::now();
    let mut clock = started;
    let mut inputs = seeds.into_iter().map(|s| (true, s));
    loop {
        let (is_seed, input) = match inputs.next() {
            Some(next) => next,
            None if clock.elapsed() < options.duration => (false, mutator.next_input()),
            None => break,
        };
        // The first input builds the fixture: the watchdog leaves it be.
        let watch = (report.execs > 0).then_some(&watchdog);
        let began = Instant::now();
        let outcome = execute(target, &input, watch);
        report.execs += 1;
        if report.execs == 1 {
            report.setup = started.elapsed();
            clock = Instant::now();
        } else if began.elapsed() > report.slowest.0 {
            report.slowest.0 = began.elapsed();
            slowest_input.clone_from(&input);
        }
        if let Err(message) = outcome {
            let kind = if is_seed { "seed-crash" } else { "crash" };
            let artifact = corpus::write_artifact(target.name, kind, &input)?;
            report.crash = Some(Crash { artifact, message });
            break;
        }
    }
    report.elapsed = clock.elapsed();
    if report.slowest.0 > SLOW {
        report.slowest.1 = Some(corpus::write_artifact(target.name, "slow", &slowest_input)?);
    }
    Ok(report)
}

/// Run one input on a thread named after `target`, as the runner does;
/// what broke, if anything did.
pub fn replay(target: &'static Target, input: Vec<u8>) -> io::Result<Result<(), String>> {
    panics::install();
    std::thread::Builder::new()
        .name(format!("fuzz-{}-replay", target.name))
        .spawn(move || execute(target, &input, None))?
        .join()
        .map_err(|_| io::Error::other("the replay thread panicked"))
}

/// Run one input; what broke, if anything did.
fn execute(target: &Target, input: &[u8], watchdog: Option<&Watchdog>) -> Result<(), String> {
    if let Some(watchdog) = watchdog {
        watchdog.begin(input);
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
    if let Some(watchdog) = watchdog {
        watchdog.end();
    }
    let panics = panics::take(target.name);
    match outcome {
        Err(payload) => Err(payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-string payload".to_string())),
        Ok(()) => match panics.first() {
            Some(panic) => Err(format!(
                "a panic on thread {} (it may belong to an earlier input): {}",
                panic.thread, panic.message
            )),
            None => Ok(()),
        },
    }
}

/// The input running now, and since when.
type Running = Arc<Mutex<Option<(Instant, Vec<u8>)>>>;

/// Aborts the process, after saving the input, when one runs too long.
struct Watchdog {
    current: Running,
    stop: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(target: &'static str, timeout: Duration) -> io::Result<Self> {
        let current: Running = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (watched, stopped) = (current.clone(), stop.clone());
        std::thread::Builder::new()
            .name(format!("fuzz-{target}-watchdog"))
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(250));
                    let slow = watched
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .as_ref()
                        .filter(|(since, _)| since.elapsed() > timeout)
                        .map(|(_, input)| input.clone());
                    if let Some(input) = slow {
                        let saved = corpus::write_artifact(target, "timeout", &input);
                        let saved = match &saved {
                            Ok(path) => path.display().to_string(),
                            Err(e) => format!("<not saved: {e}>"),
                        };
                        eprintln!(
                            "fuzz {target}: an input ran longer than {timeout:?}; written to {saved}"
                        );
                        std::process::abort();
                    }
                }
            })?;
        Ok(Self { current, stop })
    }

    fn begin(&self, input: &[u8]) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((Instant::now(), input.to_vec()));
    }

    fn end(&self) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boom_seed() -> Vec<Vec<u8>> {
        vec![b"fine".to_vec(), b"boom".to_vec()]
    }

    /// Panics on `boom`.
    const CRASHY_TARGET: Target = Target {
        name: "crashy",
        run: |data| assert!(data != b"boom", "boom found"),
        min_execs_per_sec: 0.0,
        dictionary: &[],
        json: false,
        max_len: 16,
        extra_seeds: boom_seed,
    };
    static CRASHY: Target = CRASHY_TARGET;

    /// Panics on another thread of its own on `late`.
    static LATECOMER: Target = Target {
        name: "latecomer",
        run: |data| {
            if data == b"late" {
                let _ = std::thread::Builder::new()
                    .name("fuzz-latecomer-worker".into())
                    .spawn(|| panic!("a worker's panic"))
                    .map(std::thread::JoinHandle::join);
            }
        },
        ..CRASHY_TARGET
    };

    #[test]
    fn a_crash_is_written_and_stops_the_run() {
        let options = Options {
            duration: Duration::from_secs(5),
            seed: 1,
            exec_timeout: Duration::from_secs(60),
        };
        let report = run(&CRASHY, &options).expect("the run starts");
        let crash = report.crash.as_ref().expect("a crash");
        assert!(!report.passed());
        assert_eq!(report.execs, 2, "the run stops at the crash");
        assert!(crash.message.contains("boom found"), "{}", crash.message);
        assert_eq!(std::fs::read(&crash.artifact).expect("written"), b"boom");
        assert!(report.to_string().contains("CRASH"), "{report}");
        let _ = std::fs::remove_dir_all(corpus::artifact_dir("crashy"));
    }

    #[test]
    fn a_panic_on_another_thread_counts() {
        let failed = replay(&LATECOMER, b"late".to_vec()).expect("the replay runs");
        assert!(failed.is_err_and(|m| m.contains("a worker's panic")));
        assert!(replay(&LATECOMER, b"fine".to_vec()).expect("runs").is_ok());
    }

    #[test]
    fn too_few_executions_fail_the_report() {
        let report = Report {
            target: "crashy",
            execs: 9,
            elapsed: Duration::from_secs(1),
            setup: Duration::ZERO,
            min_execs: 10,
            seed: 0,
            crash: None,
            slowest: (Duration::ZERO, None),
        };
        assert!(!report.passed());
        assert!(
            report.to_string().ends_with("TOO FEW executions"),
            "{report}"
        );
    }
}
