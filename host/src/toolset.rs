//! The built-in toolset's components: file and web tools built from
//! `toolset/<name>` with the host and shipped inside the binary. How a
//! config declares them, and their names, is `crate::config::toolset`.

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/toolset.rs"));
}

/// The component of a toolset tool, built from `toolset/<name>` with the host.
pub fn component(name: &str) -> Option<&'static [u8]> {
    embedded::TOOLSET_COMPONENTS
        .iter()
        .find(|(tool, _)| *tool == name)
        .map(|(_, bytes)| *bytes)
}
