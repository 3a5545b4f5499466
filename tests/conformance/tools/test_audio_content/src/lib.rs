//! Conformance fixture `test_audio_content`: one WAV audio block.

use toolhost_sdk::prelude::*;

struct AudioContent;

impl Tool for AudioContent {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Returns 10 ms of a 440 Hz tone as WAV audio.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(Output::new().with_audio("audio/wav", include_bytes!("../../../tone.wav")))
    }
}

export_tool!(AudioContent);
