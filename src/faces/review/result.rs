//! The JSON result of a review, as plain data: what the reviewer hands back to a harness (on
//! stdout, or to `watch`'s agent), built by [`super::apply`] and kept in the model once applied.

use crate::error::Code;
use crate::report::response::Response;
use serde::Serialize;

/// The JSON result of a review: the SPEC §4 response of the accepted edits (what was written,
/// or would have been), then whether they were applied, then every unit's decision.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewResult {
    #[serde(flatten)]
    pub response: Response,
    /// The reviewer applied its decisions (`Enter` on the summary, and the write succeeded or
    /// there was nothing to write).
    pub applied: bool,
    /// The reviewer's note on the whole batch (`N`), for the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub decisions: Vec<DecisionEntry>,
}

/// One unit's decision.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionEntry {
    pub path: String,
    pub op: &'static str,
    /// The edit's index in its file (absent for a create, delete or rename).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `accepted`, `rejected`, `undecided`, `failed` or `stale`.
    pub decision: &'static str,
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalizations: Option<Vec<&'static str>>,
    /// Why a failed unit could not be placed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<DecisionError>,
    /// The reviewer's note on this unit (`n`), for the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DecisionError {
    pub code: Code,
    pub message: String,
}
