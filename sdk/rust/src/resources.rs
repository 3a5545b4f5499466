//! Resources a tool's component offers to MCP clients (`resources/list`,
//! `resources/templates/list`, `resources/read`), and [`updated`], which
//! tells the clients subscribed to one of them that it changed.
//!
//! Implement [`Resources`] and name it in `export_tool!`:
//!
//! ```
//! use std::collections::BTreeMap;
//! use toolhost_sdk::prelude::*;
//! use toolhost_sdk::resources::{Contents, ReadError, Resource, Resources, Template};
//!
//! struct Notes;
//!
//! impl Resources for Notes {
//!     fn list() -> Vec<Resource> {
//!         vec![Resource::new("notes://index", "index").with_media_type("text/plain")]
//!     }
//!
//!     fn templates() -> Vec<Template> {
//!         vec![Template::new("notes://{id}", "note").with_description("One note, by id.")]
//!     }
//!
//!     fn read(uri: &str, parameters: &BTreeMap<String, String>) -> Result<Vec<Contents>, ReadError> {
//!         match parameters.get("id") {
//!             None => Ok(vec![Contents::text(uri, "1\n2\n").with_media_type("text/plain")]),
//!             Some(id) if id == "1" => Ok(vec![Contents::text(uri, "First note.")]),
//!             Some(_) => Err(ReadError::NotFound),
//!         }
//!     }
//! }
//! # struct Echo;
//! # impl Tool for Echo {
//! #     type Input = NoInput;
//! #     const DESCRIPTION: &'static str = "Echo.";
//! #     fn execute(_: NoInput, _: &CallContext) -> Result<Output, ToolError> { Ok("".into()) }
//! # }
//! # export_tool!(Echo, resources = Notes);
//! ```
//!
//! The host lists the resources and templates when the component loads (at
//! most 256 and 32; addresses and templates unique on the host, at most
//! 2048 bytes), routes a read to the component whose resource or template
//! the address is, and runs `read` in a fresh instance with the tool's
//! grants, read-only, and no workspace. The contents count against the
//! tool's `max_output_bytes`.

use std::collections::BTreeMap;

use crate::bindings::exports::toolhost::tool::resources as wit;

/// A resource at a fixed address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Its address: an absolute URI, unique on the host.
    pub uri: String,
    /// A short name.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it holds, for the model.
    pub description: Option<String>,
    /// Its IANA media type, when known.
    pub media_type: Option<String>,
}

/// A family of resources whose addresses follow a template: RFC 6570 with
/// simple `{name}` expressions, each matching one or more characters other
/// than `/`, `?` and `#`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The template, e.g. `notes://{folder}/{id}`.
    pub uri_template: String,
    /// A short name.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What its resources hold, for the model.
    pub description: Option<String>,
    /// The media type of its resources, when known.
    pub media_type: Option<String>,
}

macro_rules! describe {
    ($type:ty) => {
        impl $type {
            /// A title for people, when it differs from the name.
            pub fn with_title(mut self, title: impl Into<String>) -> Self {
                self.title = Some(title.into());
                self
            }

            /// What it holds, for the model.
            pub fn with_description(mut self, description: impl Into<String>) -> Self {
                self.description = Some(description.into());
                self
            }

            /// Its IANA media type.
            pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
                self.media_type = Some(media_type.into());
                self
            }
        }
    };
}

describe!(Resource);
describe!(Template);

impl Resource {
    /// The resource at `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            media_type: None,
        }
    }
}

impl Template {
    /// The resources at the addresses `uri_template` matches, called `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            media_type: None,
        }
    }
}

/// What a resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    /// Text.
    Text(String),
    /// Bytes (clients get them base64-encoded).
    Blob(Vec<u8>),
}

/// The contents of one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contents {
    /// Its address: the one read, or one below it.
    pub uri: String,
    /// Its IANA media type, when known.
    pub media_type: Option<String>,
    /// What it holds.
    pub data: Data,
}

impl Contents {
    /// Text at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            media_type: None,
            data: Data::Text(text.into()),
        }
    }

    /// Bytes at `uri`.
    pub fn blob(uri: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            uri: uri.into(),
            media_type: None,
            data: Data::Blob(bytes.into()),
        }
    }

    /// Its IANA media type.
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = Some(media_type.into());
        self
    }

    fn into_wit(self) -> wit::ResourceContents {
        wit::ResourceContents {
            uri: self.uri,
            media_type: self.media_type,
            data: match self.data {
                Data::Text(text) => wit::ResourceData::Text(text),
                Data::Blob(bytes) => wit::ResourceData::Blob(bytes),
            },
        }
    }
}

/// Why a resource could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Nothing is at that address (now).
    NotFound,
    /// The read failed; the message says why.
    Failed(String),
}

impl<E: std::fmt::Display> From<E> for ReadError {
    /// Any error (a key-value or HTTP one, say) fails the read with its
    /// message, so `?` works in [`Resources::read`].
    fn from(error: E) -> Self {
        Self::Failed(error.to_string())
    }
}

/// The resources a component offers; name the implementation in
/// `export_tool!(Tool, resources = R)`.
pub trait Resources {
    /// The resources at fixed addresses, read once when the component loads.
    fn list() -> Vec<Resource> {
        Vec::new()
    }

    /// The templates of the addresses it reads, read once at load.
    fn templates() -> Vec<Template> {
        Vec::new()
    }

    /// The contents at `uri`: a listed resource (no `parameters`), or an
    /// address matching a template (`parameters` holds its expressions'
    /// values, percent-decoded).
    fn read(uri: &str, parameters: &BTreeMap<String, String>) -> Result<Vec<Contents>, ReadError>;
}

/// No resources: what `export_tool!(Tool)` offers.
pub struct NoResources;

impl Resources for NoResources {
    fn read(
        _uri: &str,
        _parameters: &BTreeMap<String, String>,
    ) -> Result<Vec<Contents>, ReadError> {
        Err(ReadError::NotFound)
    }
}

/// Tell the clients subscribed to `uri` that it changed: an address this
/// component offers (a listed resource, or one matching its templates).
/// Each address goes out once a call, at most 64 a call; only `execute`
/// may announce. The error says why the host refused.
pub fn updated(uri: &str) -> Result<(), String> {
    crate::bindings::toolhost::tool::resource_updates::updated(uri)
}

/// The export glue for `list-resources`.
pub(crate) fn list<R: Resources>() -> Vec<wit::ResourceInfo> {
    R::list()
        .into_iter()
        .map(|r| wit::ResourceInfo {
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            media_type: r.media_type,
        })
        .collect()
}

/// The export glue for `list-resource-templates`.
pub(crate) fn templates<R: Resources>() -> Vec<wit::ResourceTemplate> {
    R::templates()
        .into_iter()
        .map(|t| wit::ResourceTemplate {
            uri_template: t.uri_template,
            name: t.name,
            title: t.title,
            description: t.description,
            media_type: t.media_type,
        })
        .collect()
}

/// The export glue for `read-resource`.
pub(crate) fn read<R: Resources>(
    uri: &str,
    parameters: Vec<(String, String)>,
) -> Result<Vec<wit::ResourceContents>, wit::ReadError> {
    let parameters: BTreeMap<String, String> = parameters.into_iter().collect();
    match R::read(uri, &parameters) {
        Ok(contents) => Ok(contents.into_iter().map(Contents::into_wit).collect()),
        Err(ReadError::NotFound) => Err(wit::ReadError::NotFound),
        Err(ReadError::Failed(message)) => Err(wit::ReadError::Failed(message)),
    }
}
