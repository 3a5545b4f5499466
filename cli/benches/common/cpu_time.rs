//! A process's CPU time, read by the MCP benches for the server's cost per
//! call.

use std::time::Duration;

/// The CPU time (user and system) process `pid` has used so far, from
/// `/proc/<pid>/stat`, whose times count USER_HZ ticks (100 a second on
/// Linux).
pub fn cpu_time(pid: u32) -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name may hold spaces: the fields start after its `)`.
    let (_, fields) = stat
        .rsplit_once(')')
        .ok_or_else(|| anyhow::anyhow!("/proc/{pid}/stat has no command name"))?;
    let fields: Vec<&str> = fields.split_whitespace().collect();
    // `utime` and `stime`, fields 14 and 15 of the line.
    let ticks: u64 = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    Ok(Duration::from_millis(ticks * 10))
}
