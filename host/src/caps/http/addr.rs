//! Which IP addresses a tool may reach without naming them literally.
//!
//! Only globally routable unicast addresses pass. Everything in the IANA
//! special-purpose registries that is not (loopback, private, link-local,
//! unique-local, shared/CGNAT, cloud metadata, IPv4 embedded in IPv6,
//! multicast, broadcast, documentation, benchmarking, reserved) is refused,
//! and so is all IPv6 space outside global unicast `2000::/3`. An allow-list
//! entry that names the address literally lifts the refusal for that entry's
//! scheme and port (see [`super::AllowList::names_ip`]).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not globally routable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressClass {
    /// `0.0.0.0` or `::`: on most systems a connection goes to this host.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// Shared address space (carrier-grade NAT), `100.64/10`.
    SharedAddressSpace,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// A cloud instance-metadata endpoint (`169.254.169.254`, `fd00:ec2::254`).
    Metadata,
    /// IPv6 unique-local, `fc00::/7`.
    UniqueLocal,
    /// IPv4-mapped IPv6, `::ffff:0:0/96`.
    Ipv4Mapped,
    /// IPv4-compatible IPv6 (deprecated), `::/96`.
    Ipv4Compatible,
    /// IPv4/IPv6 translation (NAT64, SIIT): `64:ff9b::/96`, `64:ff9b:1::/48`.
    Ipv4Translated,
    /// 6to4, `2002::/16`: the next 32 bits are an IPv4 address.
    SixToFour,
    /// Teredo, `2001::/32`: an IPv4 address is embedded.
    Teredo,
    /// Multicast, `224/4`, `ff00::/8`.
    Multicast,
    /// The limited broadcast address `255.255.255.255`.
    Broadcast,
    /// Documentation ranges (`192.0.2/24`, `2001:db8::/32`, …).
    Documentation,
    /// Benchmarking, `198.18/15`, `2001:2::/48`.
    Benchmarking,
    /// Reserved, deprecated or otherwise not global unicast.
    Reserved,
}

impl AddressClass {
    /// The class's name as it appears in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Unspecified => "unspecified",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::SharedAddressSpace => "shared address space (CGNAT)",
            Self::LinkLocal => "link-local",
            Self::Metadata => "cloud metadata",
            Self::UniqueLocal => "unique-local",
            Self::Ipv4Mapped => "IPv4-mapped IPv6",
            Self::Ipv4Compatible => "IPv4-compatible IPv6",
            Self::Ipv4Translated => "IPv4-translated IPv6",
            Self::SixToFour => "6to4",
            Self::Teredo => "Teredo",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Documentation => "documentation",
            Self::Benchmarking => "benchmarking",
            Self::Reserved => "reserved",
        }
    }
}

/// The special-purpose block an address falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecialRange {
    /// What the block is for.
    pub class: AddressClass,
    /// The block, e.g. `127.0.0.0/8`.
    pub cidr: &'static str,
}

impl fmt::Display for SpecialRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.class.name(), self.cidr)
    }
}

/// The special-purpose block `ip` falls in, or `None` if it is globally
/// routable unicast.
pub fn special_range(ip: IpAddr) -> Option<SpecialRange> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

/// Whether `ip` is globally routable unicast (no special-purpose block).
pub fn is_globally_routable(ip: IpAddr) -> bool {
    special_range(ip).is_none()
}

use AddressClass as C;

/// IPv4 blocks, most specific first.
const V4: &[(Ipv4Addr, u8, AddressClass, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 32, C::Unspecified, "0.0.0.0/32"),
    (Ipv4Addr::new(0, 0, 0, 0), 8, C::Reserved, "0.0.0.0/8"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, C::Private, "10.0.0.0/8"),
    (
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        C::SharedAddressSpace,
        "100.64.0.0/10",
    ),
    (Ipv4Addr::new(127, 0, 0, 0), 8, C::Loopback, "127.0.0.0/8"),
    (
        Ipv4Addr::new(169, 254, 169, 254),
        32,
        C::Metadata,
        "169.254.169.254/32",
    ),
    (
        Ipv4Addr::new(169, 254, 0, 0),
        16,
        C::LinkLocal,
        "169.254.0.0/16",
    ),
    // Azure's WireServer: a public address only reachable from inside Azure.
    (
        Ipv4Addr::new(168, 63, 129, 16),
        32,
        C::Metadata,
        "168.63.129.16/32",
    ),
    (
        Ipv4Addr::new(172, 16, 0, 0),
        12,
        C::Private,
        "172.16.0.0/12",
    ),
    (Ipv4Addr::new(192, 0, 0, 0), 24, C::Reserved, "192.0.0.0/24"),
    (
        Ipv4Addr::new(192, 0, 2, 0),
        24,
        C::Documentation,
        "192.0.2.0/24",
    ),
    (
        Ipv4Addr::new(192, 88, 99, 0),
        24,
        C::Reserved,
        "192.88.99.0/24",
    ),
    (
        Ipv4Addr::new(192, 168, 0, 0),
        16,
        C::Private,
        "192.168.0.0/16",
    ),
    (
        Ipv4Addr::new(198, 18, 0, 0),
        15,
        C::Benchmarking,
        "198.18.0.0/15",
    ),
    (
        Ipv4Addr::new(198, 51, 100, 0),
        24,
        C::Documentation,
        "198.51.100.0/24",
    ),
    (
        Ipv4Addr::new(203, 0, 113, 0),
        24,
        C::Documentation,
        "203.0.113.0/24",
    ),
    (Ipv4Addr::new(224, 0, 0, 0), 4, C::Multicast, "224.0.0.0/4"),
    (
        Ipv4Addr::new(255, 255, 255, 255),
        32,
        C::Broadcast,
        "255.255.255.255/32",
    ),
    (Ipv4Addr::new(240, 0, 0, 0), 4, C::Reserved, "240.0.0.0/4"),
];

/// IPv6 blocks, most specific first. Anything outside `2000::/3` that is
/// not listed is [`AddressClass::Reserved`].
const V6: &[(Ipv6Addr, u8, AddressClass, &str)] = &[
    (Ipv6Addr::UNSPECIFIED, 128, C::Unspecified, "::/128"),
    (Ipv6Addr::LOCALHOST, 128, C::Loopback, "::1/128"),
    (
        Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0),
        96,
        C::Ipv4Mapped,
        "::ffff:0:0/96",
    ),
    (
        Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0),
        96,
        C::Ipv4Translated,
        "::ffff:0:0:0/96",
    ),
    (Ipv6Addr::UNSPECIFIED, 96, C::Ipv4Compatible, "::/96"),
    (
        Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0),
        96,
        C::Ipv4Translated,
        "64:ff9b::/96",
    ),
    (
        Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        C::Ipv4Translated,
        "64:ff9b:1::/48",
    ),
    (
        Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0),
        64,
        C::Reserved,
        "100::/64",
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        32,
        C::Teredo,
        "2001::/32",
    ),
    (
        Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0),
        48,
        C::Benchmarking,
        "2001:2::/48",
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        C::Reserved,
        "2001::/23",
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        C::Documentation,
        "2001:db8::/32",
    ),
    (
        Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0),
        16,
        C::SixToFour,
        "2002::/16",
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        C::Documentation,
        "3fff::/20",
    ),
    (
        Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254),
        128,
        C::Metadata,
        "fd00:ec2::254/128",
    ),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        C::UniqueLocal,
        "fc00::/7",
    ),
    (
        Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
        10,
        C::LinkLocal,
        "fe80::/10",
    ),
    (
        Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        C::Reserved,
        "fec0::/10",
    ),
    (
        Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
        8,
        C::Multicast,
        "ff00::/8",
    ),
];

fn special_v4(ip: Ipv4Addr) -> Option<SpecialRange> {
    let bits = ip.to_bits();
    V4.iter()
        .find(|(net, len, _, _)| prefix_matches_v4(bits, net.to_bits(), *len))
        .map(|&(_, _, class, cidr)| SpecialRange { class, cidr })
}

fn special_v6(ip: Ipv6Addr) -> Option<SpecialRange> {
    let bits = ip.to_bits();
    if let Some(&(_, _, class, cidr)) = V6
        .iter()
        .find(|(net, len, _, _)| prefix_matches_v6(bits, net.to_bits(), *len))
    {
        return Some(SpecialRange { class, cidr });
    }
    // Global unicast is 2000::/3; everything else is unassigned or special.
    let global_unicast = Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0).to_bits();
    if !prefix_matches_v6(bits, global_unicast, 3) {
        return Some(SpecialRange {
            class: C::Reserved,
            cidr: "outside global unicast 2000::/3",
        });
    }
    None
}

fn prefix_matches_v4(addr: u32, net: u32, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    addr & mask == net & mask
}

fn prefix_matches_v6(addr: u128, net: u128, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    addr & mask == net & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(ip: &str) -> Option<AddressClass> {
        special_range(ip.parse().unwrap()).map(|r| r.class)
    }

    #[test]
    fn ipv4_special_ranges() {
        let cases = [
            ("0.0.0.0", C::Unspecified),
            ("0.1.2.3", C::Reserved),
            ("10.0.0.1", C::Private),
            ("10.255.255.255", C::Private),
            ("100.64.0.1", C::SharedAddressSpace),
            ("100.127.255.254", C::SharedAddressSpace),
            ("100.100.100.200", C::SharedAddressSpace),
            ("127.0.0.1", C::Loopback),
            ("127.255.0.9", C::Loopback),
            ("169.254.169.254", C::Metadata),
            ("168.63.129.16", C::Metadata),
            ("169.254.0.1", C::LinkLocal),
            ("172.16.0.1", C::Private),
            ("172.31.255.255", C::Private),
            ("192.0.0.8", C::Reserved),
            ("192.0.2.1", C::Documentation),
            ("192.88.99.1", C::Reserved),
            ("192.168.1.1", C::Private),
            ("198.18.0.1", C::Benchmarking),
            ("198.19.255.255", C::Benchmarking),
            ("198.51.100.7", C::Documentation),
            ("203.0.113.9", C::Documentation),
            ("224.0.0.1", C::Multicast),
            ("239.255.255.250", C::Multicast),
            ("240.0.0.1", C::Reserved),
            ("255.255.255.255", C::Broadcast),
        ];
        for (ip, expected) in cases {
            assert_eq!(class(ip), Some(expected), "{ip}");
        }
    }

    #[test]
    fn ipv4_global_addresses_pass() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.169.0.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert_eq!(class(ip), None, "{ip}");
            assert!(is_globally_routable(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn ipv6_special_ranges() {
        let cases = [
            ("::", C::Unspecified),
            ("::1", C::Loopback),
            ("::ffff:127.0.0.1", C::Ipv4Mapped),
            ("::ffff:8.8.8.8", C::Ipv4Mapped),
            ("::ffff:169.254.169.254", C::Ipv4Mapped),
            ("::ffff:0:10.0.0.1", C::Ipv4Translated),
            ("::127.0.0.1", C::Ipv4Compatible),
            ("64:ff9b::7f00:1", C::Ipv4Translated),
            ("64:ff9b::8.8.8.8", C::Ipv4Translated),
            ("64:ff9b:1::1", C::Ipv4Translated),
            ("100::1", C::Reserved),
            ("2001::1", C::Teredo),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", C::Teredo),
            ("2001:2::1", C::Benchmarking),
            ("2001:10::1", C::Reserved),
            ("2001:db8::1", C::Documentation),
            ("2002:7f00:1::1", C::SixToFour),
            ("2002:a9fe:a9fe::1", C::SixToFour),
            ("3fff::1", C::Documentation),
            ("fd00:ec2::254", C::Metadata),
            ("fd00:ec2::253", C::UniqueLocal),
            ("fc00::1", C::UniqueLocal),
            ("fdff:ffff::1", C::UniqueLocal),
            ("fe80::1", C::LinkLocal),
            ("febf::1", C::LinkLocal),
            ("fec0::1", C::Reserved),
            ("ff02::1", C::Multicast),
            ("ff0e::1", C::Multicast),
            ("4000::1", C::Reserved),
            ("5f00::1", C::Reserved),
            ("1000::1", C::Reserved),
        ];
        for (ip, expected) in cases {
            assert_eq!(class(ip), Some(expected), "{ip}");
        }
    }

    #[test]
    fn ipv6_global_addresses_pass() {
        for ip in [
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "2001:200::1",
            "2a00:1450:4001::1",
            "3ffe::1",
        ] {
            assert_eq!(class(ip), None, "{ip}");
        }
    }

    #[test]
    fn messages_name_the_block() {
        let range = special_range("10.1.2.3".parse().unwrap()).unwrap();
        assert_eq!(range.to_string(), "private (10.0.0.0/8)");
        let range = special_range("::ffff:127.0.0.1".parse().unwrap()).unwrap();
        assert_eq!(range.to_string(), "IPv4-mapped IPv6 (::ffff:0:0/96)");
    }
}
