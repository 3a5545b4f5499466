//! `toolhost-fuzz`: the stable runner from the command line.
//!
//! ```text
//! toolhost-fuzz run [--secs N] [TARGET...]   run targets (all by default), one after another
//! toolhost-fuzz replay TARGET FILE...        run files as inputs, e.g. a crash to debug
//! toolhost-fuzz seeds TARGET DIR             write the target's seeds into DIR (for cargo fuzz)
//! toolhost-fuzz dict TARGET FILE             write the target's dictionary for libFuzzer's -dict
//! toolhost-fuzz list                         the targets
//! ```
//!
//! `run` takes its other settings from the environment (see
//! [`toolhost_fuzz::runner::Options::from_env`]) and exits 1 if a target
//! crashed or ran fewer inputs than its minimum.

use std::path::Path;
use std::process::ExitCode;

use toolhost_fuzz::corpus;
use toolhost_fuzz::runner::{self, Options};
use toolhost_fuzz::targets::{self, Target};

const USAGE: &str = "usage: toolhost-fuzz run [--secs N] [TARGET...] | replay TARGET FILE... | \
                     seeds TARGET DIR | dict TARGET FILE | list";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("replay") => replay(&args[1..]),
        Some("seeds") => seeds(&args[1..]),
        Some("dict") => dict(&args[1..]),
        Some("list") => {
            for target in targets::ALL {
                println!("{}", target.name);
            }
            Ok(true)
        }
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("toolhost-fuzz: {message}");
            ExitCode::from(2)
        }
    }
}

fn target(name: &str) -> Result<&'static Target, String> {
    targets::find(name).ok_or_else(|| {
        let names: Vec<&str> = targets::ALL.iter().map(|t| t.name).collect();
        format!("no target `{name}` (targets: {})", names.join(", "))
    })
}

fn run(args: &[String]) -> Result<bool, String> {
    let mut options = Options::from_env();
    let mut chosen = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--secs" {
            let secs = args
                .next()
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                .ok_or("--secs needs a number of seconds")?;
            options.duration = std::time::Duration::from_secs_f64(secs);
        } else {
            chosen.push(target(arg)?);
        }
    }
    if chosen.is_empty() {
        chosen = targets::ALL.iter().collect();
    }
    let mut passed = true;
    for target in chosen {
        let report = runner::run(target, &options).map_err(|e| format!("{}: {e}", target.name))?;
        println!("{report}");
        passed &= report.passed();
    }
    Ok(passed)
}

fn replay(args: &[String]) -> Result<bool, String> {
    let (name, files) = args.split_first().ok_or(USAGE)?;
    let target = target(name)?;
    let mut passed = true;
    for file in files {
        let input = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        match runner::replay(target, input).map_err(|e| e.to_string())? {
            Ok(()) => println!("{file}: ok"),
            Err(message) => {
                println!("{file}: CRASH: {message}");
                passed = false;
            }
        }
    }
    Ok(passed)
}

fn seeds(args: &[String]) -> Result<bool, String> {
    let [name, dir] = args else {
        return Err(USAGE.to_string());
    };
    let target = target(name)?;
    let dir = Path::new(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let seeds = corpus::seeds(target).map_err(|e| e.to_string())?;
    for (i, seed) in seeds.iter().enumerate() {
        let path = dir.join(format!("seed-{i:03}"));
        std::fs::write(&path, seed).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!(
        "{} seeds for {} in {}",
        seeds.len(),
        target.name,
        dir.display()
    );
    Ok(true)
}

fn dict(args: &[String]) -> Result<bool, String> {
    let [name, file] = args else {
        return Err(USAGE.to_string());
    };
    let target = target(name)?;
    let text: String = target
        .tokens()
        .map(|token| format!("{}\n", dict_entry(token)))
        .collect();
    std::fs::write(file, text).map_err(|e| format!("{file}: {e}"))?;
    Ok(true)
}

/// A token as a line of a libFuzzer dictionary: quoted, with `\xNN` escapes.
fn dict_entry(token: &[u8]) -> String {
    let mut line = String::from("\"");
    for &b in token {
        match b {
            b'"' | b'\\' => line.push_str(&format!("\\{}", char::from(b))),
            b' '..=b'~' => line.push(char::from(b)),
            _ => line.push_str(&format!("\\x{b:02X}")),
        }
    }
    line.push('"');
    line
}

#[cfg(test)]
mod tests {
    use super::dict_entry;

    #[test]
    fn dictionary_entries_are_quoted_and_escaped() {
        assert_eq!(dict_entry(b"tools/call"), r#""tools/call""#);
        assert_eq!(dict_entry(b"\"a\\\n\0"), r#""\"a\\\x0A\x00""#);
    }
}
