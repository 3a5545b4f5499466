//! Conformance fixture `test_resources`: a tool whose component offers the
//! suite's resources (`test://static-text`, `test://static-binary`,
//! `test://watched-resource`) and template (`test://template/{id}/data`);
//! a call announces that the watched resource changed.

use std::collections::BTreeMap;

use toolhost_sdk::prelude::*;
use toolhost_sdk::resources::{self, Contents, ReadError, Resource, Resources, Template};

const WATCHED: &str = "test://watched-resource";

struct Touch;

impl Tool for Touch {
    type Input = NoInput;
    const DESCRIPTION: &'static str =
        "Tell the clients subscribed to test://watched-resource that it changed.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Idempotent);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        resources::updated(WATCHED).map_err(ToolError::Failed)?;
        Ok(format!("{WATCHED} changed.").into())
    }
}

struct Fixtures;

impl Resources for Fixtures {
    fn list() -> Vec<Resource> {
        vec![
            Resource::new("test://static-text", "static-text")
                .with_description("A static text resource for testing.")
                .with_media_type("text/plain"),
            Resource::new("test://static-binary", "static-binary")
                .with_description("A static binary resource (a PNG) for testing.")
                .with_media_type("image/png"),
            Resource::new(WATCHED, "watched-resource")
                .with_description("A resource that changes when test_resources is called.")
                .with_media_type("text/plain"),
        ]
    }

    fn templates() -> Vec<Template> {
        vec![
            Template::new("test://template/{id}/data", "template-data")
                .with_description("Data for one id.")
                .with_media_type("application/json"),
        ]
    }

    fn read(uri: &str, parameters: &BTreeMap<String, String>) -> Result<Vec<Contents>, ReadError> {
        let contents = match uri {
            "test://static-text" => {
                Contents::text(uri, "This is the content of the static text resource.")
                    .with_media_type("text/plain")
            }
            "test://static-binary" => {
                Contents::blob(uri, include_bytes!("../../../red-pixel.png").as_slice())
                    .with_media_type("image/png")
            }
            WATCHED => {
                Contents::text(uri, "Watched resource content.").with_media_type("text/plain")
            }
            _ => {
                let id = parameters.get("id").ok_or(ReadError::NotFound)?;
                let data = json!({
                    "id": id,
                    "templateTest": true,
                    "data": format!("Data for ID: {id}"),
                });
                Contents::text(uri, data.to_string()).with_media_type("application/json")
            }
        };
        Ok(vec![contents])
    }
}

export_tool!(Touch, resources = Fixtures);
