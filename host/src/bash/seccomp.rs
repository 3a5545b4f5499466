//! The seccomp filter every `bash` sandbox runs under, compiled to the
//! classic BPF bubblewrap loads (`--seccomp FD`): it refuses what a shell
//! never needs and the kernel's riskiest surfaces — debugging other
//! processes, mounting, kernel keyrings, eBPF, modules, kexec,
//! `perf_event_open`, `userfaultfd`, `io_uring`, namespaces, the clock —
//! with `EPERM`; `clone3` with `ENOSYS` (its flags live in memory a filter
//! cannot read, and libc falls back to `clone`, whose flags bubblewrap's
//! own filter and `--disable-userns` hold); x32 system calls on x86-64;
//! and any other architecture's calls end the process.

/// `seccomp_data.nr`'s offset.
const NR: u32 = 0;
/// `seccomp_data.arch`'s offset.
const ARCH: u32 = 4;

/// `BPF_LD | BPF_W | BPF_ABS`.
const LOAD: u16 = 0x20;
/// `BPF_JMP | BPF_JEQ | BPF_K`.
const JUMP_EQ: u16 = 0x15;
/// `BPF_JMP | BPF_JGE | BPF_K`.
const JUMP_GE: u16 = 0x35;
/// `BPF_RET | BPF_K`.
const RETURN: u16 = 0x06;

const ALLOW: u32 = 0x7fff_0000;
const KILL_PROCESS: u32 = 0x8000_0000;
const ERRNO: u32 = 0x0005_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// x86-64's x32 system calls carry this bit in their number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The calls refused with `EPERM`.
const REFUSED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_setns,
    libc::SYS_unshare,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_fanotify_init,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_vhangup,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_uselib,
];

/// One instruction, as the kernel's `struct sock_filter` lays it out.
fn instruction(code: u16, jump_true: u8, jump_false: u8, k: u32) -> [u8; 8] {
    let mut bytes = [0u8; 8];
    bytes[0..2].copy_from_slice(&code.to_ne_bytes());
    bytes[2] = jump_true;
    bytes[3] = jump_false;
    bytes[4..8].copy_from_slice(&k.to_ne_bytes());
    bytes
}

/// The filter, as the bytes bubblewrap reads.
pub(super) fn program() -> Vec<u8> {
    let mut program: Vec<[u8; 8]> = vec![
        instruction(LOAD, 0, 0, ARCH),
        instruction(JUMP_EQ, 1, 0, AUDIT_ARCH),
        instruction(RETURN, 0, 0, KILL_PROCESS),
        instruction(LOAD, 0, 0, NR),
    ];
    #[cfg(target_arch = "x86_64")]
    program.extend([
        instruction(JUMP_GE, 0, 1, X32_SYSCALL_BIT),
        instruction(RETURN, 0, 0, ERRNO | errno(libc::EPERM)),
    ]);
    program.extend([
        instruction(JUMP_EQ, 0, 1, number(libc::SYS_clone3)),
        instruction(RETURN, 0, 0, ERRNO | errno(libc::ENOSYS)),
    ]);
    for call in REFUSED {
        program.extend([
            instruction(JUMP_EQ, 0, 1, number(*call)),
            instruction(RETURN, 0, 0, ERRNO | errno(libc::EPERM)),
        ]);
    }
    program.push(instruction(RETURN, 0, 0, ALLOW));
    program.concat()
}

/// A system call's number as the filter compares it.
fn number(call: libc::c_long) -> u32 {
    u32::try_from(call).unwrap_or(u32::MAX)
}

/// An errno as a return value's data.
fn errno(errno: libc::c_int) -> u32 {
    u32::try_from(errno).unwrap_or(1) & 0xffff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_checks_the_architecture_first_and_allows_last() {
        let program = program();
        assert_eq!(program.len() % 8, 0);
        let count = program.len() / 8;
        assert!(
            count < 4096,
            "a BPF program holds at most 4096 instructions"
        );
        assert_eq!(&program[..8], &instruction(LOAD, 0, 0, ARCH));
        assert_eq!(
            &program[program.len() - 8..],
            &instruction(RETURN, 0, 0, ALLOW)
        );
    }
}
