//! `redline read`: a file with line numbers and its version, for agents that later send
//! `expectHash`.

use super::{Format, output};
use crate::error::ExitStatus;
use crate::faces::read::ReadParams;
use crate::service::Settings;

pub(super) fn run(
    settings: &Settings,
    path: &str,
    offset: Option<usize>,
    limit: Option<usize>,
    format: Option<Format>,
) -> ExitStatus {
    let format = match format
        .unwrap_or(Format::Text)
        .for_command("read", &[Format::Text, Format::Json])
    {
        Ok(f) => f,
        Err(exit) => return exit,
    };
    if offset == Some(0) {
        output::diagnostic(
            "--offset is 1-based",
            Some("use --offset 1 for the first line"),
        );
        return ExitStatus::Usage;
    }
    let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let params = ReadParams {
        path: path.to_string(),
        offset: offset.map(clamp),
        limit: limit.map(clamp),
    };
    match crate::faces::read::read(&params, settings) {
        Ok(lines) if format == Format::Json => {
            output::line(&serde_json::to_string_pretty(&lines).unwrap_or_default());
            ExitStatus::Success
        }
        Ok(lines) => {
            output::out(&lines.numbered());
            ExitStatus::Success
        }
        Err(e) => {
            output::diagnostic(
                &e.message,
                e.hint
                    .as_deref()
                    .or(Some("check the path (it is relative to --root)")),
            );
            e.code.exit_status()
        }
    }
}
