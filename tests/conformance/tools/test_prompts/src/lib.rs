//! Conformance fixture `test_prompts`: a tool whose component offers the
//! suite's prompts (`test_simple_prompt`, `test_prompt_with_arguments`,
//! `test_prompt_with_embedded_resource`, `test_prompt_with_image`) and
//! completes `test_prompt_with_arguments`' arguments.

use std::collections::BTreeMap;

use toolhost_sdk::prelude::*;
use toolhost_sdk::prompts::{Message, Prompt, Prompts};

struct PromptFixtures;

impl Tool for PromptFixtures {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Names the prompts this component offers.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let names: Vec<String> = Fixtures::list().into_iter().map(|p| p.name).collect();
        Ok(names.join(", ").into())
    }
}

struct Fixtures;

impl Prompts for Fixtures {
    fn list() -> Vec<Prompt> {
        vec![
            Prompt::new("test_simple_prompt").with_description("A simple prompt for testing."),
            Prompt::new("test_prompt_with_arguments")
                .with_description("A prompt that takes two arguments.")
                .with_argument("arg1", "First test argument", true)
                .with_argument("arg2", "Second test argument", true),
            Prompt::new("test_prompt_with_embedded_resource")
                .with_description("A prompt that embeds a resource.")
                .with_argument("resourceUri", "URI of the resource to embed", true),
            Prompt::new("test_prompt_with_image").with_description("A prompt with an image."),
        ]
    }

    fn get(name: &str, arguments: &BTreeMap<String, String>) -> Result<Vec<Message>, String> {
        let argument = |key: &str| arguments.get(key).cloned().unwrap_or_default();
        match name {
            "test_simple_prompt" => Ok(vec![Message::user("This is a simple prompt for testing.")]),
            "test_prompt_with_arguments" => Ok(vec![Message::user(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                argument("arg1"),
                argument("arg2")
            ))]),
            "test_prompt_with_embedded_resource" => {
                let resource = Content::Document {
                    media_type: "text/plain".into(),
                    data: b"Embedded resource content for testing.".to_vec(),
                    name: None,
                    uri: Some(argument("resourceUri")),
                };
                Ok(vec![
                    Message::user(resource),
                    Message::user("Please process the embedded resource above."),
                ])
            }
            "test_prompt_with_image" => Ok(vec![
                Message::user(Content::Image {
                    media_type: "image/png".into(),
                    data: include_bytes!("../../../red-pixel.png").to_vec(),
                }),
                Message::user("Please analyze the image above."),
            ]),
            _ => Err(format!("no prompt `{name}`")),
        }
    }

    fn complete(name: &str, argument: &str, value: &str) -> Vec<String> {
        if name != "test_prompt_with_arguments" {
            return Vec::new();
        }
        let words: &[&str] = match argument {
            "arg1" => &["paris", "park", "party", "test", "testing"],
            _ => &["world", "wonder"],
        };
        words
            .iter()
            .filter(|word| word.starts_with(value))
            .map(|word| word.to_string())
            .collect()
    }
}

export_tool!(PromptFixtures, prompts = Fixtures);
