//! Why a call failed.

use std::fmt;

use crate::bindings::toolhost::tool::types as wit;

/// Why a call failed. The message reaches the caller; the session goes on.
///
/// `?` converts the SDK's own errors and common std errors: I/O and
/// serialization failures become [`ToolError::Failed`]; an HTTP failure that
/// may pass (a timeout, a refused connection) becomes [`ToolError::Transient`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The input was well-formed but unusable; the message says why.
    InvalidInput(String),
    /// A passing failure: read and idempotent calls are tried again, up to
    /// three attempts in all, each in a fresh instance.
    Transient(String),
    /// Any other failure; not retried.
    Failed(String),
}

impl ToolError {
    /// The input was well-formed but unusable.
    pub fn invalid_input(message: impl fmt::Display) -> Self {
        Self::InvalidInput(message.to_string())
    }

    /// A failure worth retrying.
    pub fn transient(message: impl fmt::Display) -> Self {
        Self::Transient(message.to_string())
    }

    /// A failure not worth retrying.
    pub fn failed(message: impl fmt::Display) -> Self {
        Self::Failed(message.to_string())
    }

    /// The message, whatever the kind.
    pub fn message(&self) -> &str {
        match self {
            Self::InvalidInput(m) | Self::Transient(m) | Self::Failed(m) => m,
        }
    }

    pub(crate) fn into_wit(self) -> wit::ToolError {
        match self {
            Self::InvalidInput(m) => wit::ToolError::InvalidInput(m),
            Self::Transient(m) => wit::ToolError::Transient(m),
            Self::Failed(m) => wit::ToolError::Failed(m),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Self::InvalidInput(_) => "invalid input",
            Self::Transient(_) => "transient failure",
            Self::Failed(_) => "failed",
        };
        write!(f, "{kind}: {}", self.message())
    }
}

impl std::error::Error for ToolError {}

/// Errors that fail the call (`?` in `execute` turns them into
/// [`ToolError::Failed`] with their message).
macro_rules! failed_from {
    ($($error:ty),* $(,)?) => {
        $(
            impl From<$error> for ToolError {
                fn from(err: $error) -> Self {
                    Self::failed(err)
                }
            }
        )*
    };
}

failed_from!(
    std::io::Error,
    serde_json::Error,
    std::string::FromUtf8Error,
    crate::artifacts::Error,
    crate::reminders::Error,
    crate::sessions::Error,
    crate::metrics::Error,
    crate::kv::Error,
);

impl From<crate::http::Error> for ToolError {
    fn from(err: crate::http::Error) -> Self {
        if err.is_transient() {
            Self::transient(err)
        } else {
            Self::failed(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_and_display() {
        let err = ToolError::invalid_input("title is empty");
        assert_eq!(err, ToolError::InvalidInput("title is empty".into()));
        assert_eq!(err.to_string(), "invalid input: title is empty");
        assert_eq!(ToolError::transient("busy").message(), "busy");
    }

    #[test]
    fn io_errors_fail() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        assert_eq!(
            ToolError::from(io),
            ToolError::Failed("no such file".into())
        );
    }
}
