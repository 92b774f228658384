// SPDX-License-Identifier: GPL-2.0

//! Why received private data is not a conforming message, with the causes'
//! stable names for counters and logs. Part of [`super`], the protocol
//! core: pure, `core` only.

use core::fmt;

/// Why received private data is not a conforming version one message.
///
/// Any of these makes the peer count as having advertised
/// [`super::PrivateMessage::RFC_DEFAULT`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Nonconformance {
    /// No private data at all (length zero).
    Absent,
    /// Only zero octets: what InfiniBand and RoCE deliver when the peer sent
    /// no private data, since the CM pads the area with zeros.
    Zeroed {
        /// Length of the received area.
        len: u32,
    },
    /// Fewer than 8 octets, not all zero.
    Short {
        /// Length of the received area.
        len: u32,
    },
    /// The first four octets are not 0xf6ab0e18 in big-endian order.
    BadMagic {
        /// The first four octets read as a big-endian number.
        found: u32,
    },
    /// The magic matched but the version is not 1.
    UnknownVersion {
        /// The version octet received.
        found: u8,
    },
}

impl Nonconformance {
    /// Number of distinct causes, for per-cause counters.
    pub const COUNT: usize = Self::NAMES.len();

    /// The causes' short stable names, for counters and logs, in
    /// [`Nonconformance::index`] order: the one table of them.
    pub const NAMES: [&'static str; 5] =
        ["absent", "zeroed", "short", "bad_magic", "unknown_version"];

    /// A short stable name for counters and logs: `NAMES` at `index()`
    /// ("unknown" for an index past the table, which a const check below
    /// rules out for every cause; never a panic).
    pub const fn name(self) -> &'static str {
        let i = self.index();
        if i < Self::NAMES.len() {
            Self::NAMES[i]
        } else {
            "unknown"
        }
    }

    /// A dense index `0..COUNT`, for per-cause counters.
    pub const fn index(self) -> usize {
        match self {
            Nonconformance::Absent => 0,
            Nonconformance::Zeroed { .. } => 1,
            Nonconformance::Short { .. } => 2,
            Nonconformance::BadMagic { .. } => 3,
            Nonconformance::UnknownVersion { .. } => 4,
        }
    }
}

// Each cause's index is its place in `NAMES`: one value of each, in index
// order, `COUNT` of them. The compiler sees the exhaustive `index()`, not
// this list: a cause added to the enum must be added here and to `NAMES`
// (its index past the table would name it "unknown" and leave it
// uncounted, never panic; the host tests compare each name with Display).
const _: () = {
    let each: [Nonconformance; Nonconformance::COUNT] = [
        Nonconformance::Absent,
        Nonconformance::Zeroed { len: 0 },
        Nonconformance::Short { len: 0 },
        Nonconformance::BadMagic { found: 0 },
        Nonconformance::UnknownVersion { found: 0 },
    ];
    let mut i = 0;
    while i < Nonconformance::COUNT {
        assert!(each[i].index() == i);
        i += 1;
    }
};

impl fmt::Display for Nonconformance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        match *self {
            Nonconformance::Absent => Ok(()),
            Nonconformance::Zeroed { len } | Nonconformance::Short { len } => {
                write!(f, " len={len}")
            }
            Nonconformance::BadMagic { found } => write!(f, " found={found:#010x}"),
            Nonconformance::UnknownVersion { found } => write!(f, " found={found}"),
        }
    }
}
