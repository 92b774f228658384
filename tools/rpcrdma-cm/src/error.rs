// SPDX-License-Identifier: GPL-2.0

//! The tool's one error type, [`Failure`]: the exit status and the one-line
//! message a subcommand ends with; failures of the RDMA stack and of the
//! system convert into it.

use std::process::ExitCode;

/// Exit status of a subcommand.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Exit {
    /// 0: everything as expected.
    Ok = 0,
    /// 1: the peer, the data or the system did not answer as it should.
    Peer = 1,
    /// 2: the command line is wrong.
    Usage = 2,
    /// 3: nothing failed, but something could not be judged (`conform`:
    /// a verdict "could not tell", a server that never answered, the
    /// deadline reached).
    Inconclusive = 3,
    /// 4: this host could not do its part (no RDMA device, no route, an
    /// address it cannot use): nothing was learnt of the peer.
    Local = 4,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// A failure that ends a subcommand: its message goes to stderr.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Failure {
    /// The exit status.
    pub exit: Exit,
    /// What went wrong, one line.
    pub message: String,
}

impl Failure {
    /// A failure of the peer or the system (exit 1).
    pub fn peer(message: impl Into<String>) -> Self {
        Failure {
            exit: Exit::Peer,
            message: message.into(),
        }
    }

    /// A failure of this host, not of the peer (exit 4).
    pub fn local(message: impl Into<String>) -> Self {
        Failure {
            exit: Exit::Local,
            message: message.into(),
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            exit: Exit::Usage,
            message: message.into(),
        }
    }

    /// The same failure with `context` and ": " before its message.
    pub fn context(self, context: impl std::fmt::Display) -> Self {
        Failure {
            message: format!("{context}: {}", self.message),
            ..self
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Context for any error that converts into a [`Failure`]: what was being
/// done, put before its message.
pub(crate) trait Context<T> {
    /// `Err(e)` as a [`Failure`] with `context` before its message.
    fn context(self, context: impl std::fmt::Display) -> Result<T, Failure>;
}

impl<T, E: Into<Failure>> Context<T> for Result<T, E> {
    fn context(self, context: impl std::fmt::Display) -> Result<T, Failure> {
        self.map_err(|e| e.into().context(context))
    }
}

/// A failure of the RDMA stack or of the peer behind it (exit 1).
impl From<rdmacm::Error> for Failure {
    fn from(e: rdmacm::Error) -> Self {
        Failure::peer(e.to_string())
    }
}

/// A failure of the system (exit 1).
impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::peer(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_and_context() {
        let f: Failure = std::io::Error::other("disk on fire").into();
        assert_eq!(f, Failure::peer("disk on fire"));
        assert_eq!(
            Failure::usage("no such port").context("'h:x'"),
            Failure::usage("'h:x': no such port")
        );
        let f: Failure = rdmacm::Error::Timeout { what: "connect" }.into();
        assert_eq!(f.exit, Exit::Peer);
        let r: Result<(), std::io::Error> = Err(std::io::Error::other("refused"));
        assert_eq!(r.context("ping h"), Err(Failure::peer("ping h: refused")));
        let r: Result<(), Failure> = Err(Failure::usage("bad"));
        assert_eq!(r.context("x").unwrap_err().exit, Exit::Usage);
    }
}
