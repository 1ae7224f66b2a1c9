//! Stable error codes and exit statuses: the one place both are defined.
//!
//! Every error that leaves redline carries a [`Code`]; its string form is part of the contract
//! (SPEC §5) and never changes. Exit statuses come only from [`ExitStatus`].

use serde::{Deserialize, Serialize};

/// A stable error or warning code, serialized as its snake_case string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
// The variants are the wire names (serde) that SPEC defines; a doc comment per variant would
// make schemars publish `oneOf` consts instead of the schema's plain `enum` list.
#[allow(missing_docs)]
pub enum Code {
    InvalidRequest,
    NotFound,
    Ambiguous,
    Overlap,
    NoOp,
    Stale,
    OutsideRoot,
    FileNotFound,
    NotAFile,
    BinaryFile,
    UnsupportedEncoding,
    TooLarge,
    PermissionDenied,
    Io,
    Internal,
}

impl Code {
    /// The wire string of this code.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidRequest => "invalid_request",
            Code::NotFound => "not_found",
            Code::Ambiguous => "ambiguous",
            Code::Overlap => "overlap",
            Code::NoOp => "no_op",
            Code::Stale => "stale",
            Code::OutsideRoot => "outside_root",
            Code::FileNotFound => "file_not_found",
            Code::NotAFile => "not_a_file",
            Code::BinaryFile => "binary_file",
            Code::UnsupportedEncoding => "unsupported_encoding",
            Code::TooLarge => "too_large",
            Code::PermissionDenied => "permission_denied",
            Code::Io => "io",
            Code::Internal => "internal",
        }
    }

    /// The exit status a batch failing with (only) this code ends with.
    pub fn exit_status(self) -> ExitStatus {
        match self {
            Code::InvalidRequest => ExitStatus::Usage,
            Code::PermissionDenied | Code::Io => ExitStatus::WriteFailed,
            Code::Internal => ExitStatus::Internal,
            _ => ExitStatus::Rejected,
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stable warning code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
// The variants are the wire names (serde) that SPEC defines; a doc comment per variant would
// make schemars publish `oneOf` consts instead of the schema's plain `enum` list.
#[allow(missing_docs)]
pub enum WarningCode {
    HardLinkBroken,
    OverwroteExisting,
}

/// Process exit statuses (SPEC §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Every edit resolved; written unless dry-run/check/resolve.
    Success = 0,
    /// One or more edits or files rejected; nothing was written.
    Rejected = 1,
    /// Usage error or invalid request.
    Usage = 2,
    /// I/O or permission failure while writing.
    WriteFailed = 3,
    /// The reviewer was quit without applying.
    ReviewQuit = 4,
    /// Internal error.
    Internal = 101,
}

impl ExitStatus {
    /// The numeric exit code.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The more severe of two statuses (usage and internal dominate, then write failures).
    pub fn worst(self, other: ExitStatus) -> ExitStatus {
        fn rank(s: ExitStatus) -> u8 {
            match s {
                ExitStatus::Success => 0,
                ExitStatus::ReviewQuit => 1,
                ExitStatus::Rejected => 2,
                ExitStatus::WriteFailed => 3,
                ExitStatus::Usage => 4,
                ExitStatus::Internal => 5,
            }
        }
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}
