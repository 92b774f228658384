// SPDX-License-Identifier: GPL-2.0

//! Reply sizes to the XDR unit: which call makes the server send a Reply
//! of exactly a given number of octets (the Send that carries it,
//! transport header included), measured on the server, not guessed.
//!
//! Every RPC-over-RDMA message is a whole number of 4-octet XDR units, so
//! a Reply exactly at a threshold and one 4 octets above it are the two
//! sides of the threshold: a server whose limit is off by one octet or
//! more in either direction answers one of them wrongly.
//!
//! Two ways to reach a size: a read-only NFSv4.0 COMPOUND of PUTROOTFH +
//! GETATTR pairs, more PUTROOTFH and a tag (echoed by the server), which
//! needs nothing from the admin and reaches about 4 KB; and a READ of a
//! file the admin names (`--file`), any size up to the file's length.

use crate::nfs4::{read_compound, sized_compound, MAX_OPS, MAX_TAG};
use crate::transport::rpcrdma_session::{Answer, Session, CALL_HEADER, MAX_CALL};
use std::time::{Duration, Instant};

/// The Reply sizes of the COMPOUNDs, measured: the Send of `pairs` pairs,
/// `extra` PUTROOTFH and a tag of `tag` octets is
/// `first + (pairs - 1) * step + extra * putrootfh + tag / 4 * tag_unit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CompoundSizes {
    /// The Send of one pair, no tag.
    pub first: u32,
    /// What each further pair adds.
    pub step: u32,
    /// What each further PUTROOTFH adds.
    pub putrootfh: u32,
    /// What four more octets of tag add (0: the server does not echo the
    /// tag, so no tag is sent).
    pub tag_unit: u32,
}

/// The Reply sizes of a READ of the admin's file, measured: the Send of a
/// READ of `count` octets is `empty + count` while the file holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReadSizes {
    /// The file, as given.
    pub file: String,
    /// The file as the names to look up, one after the other.
    pub path: Vec<String>,
    /// The Send of a READ of 0 octets.
    pub empty: u32,
}

/// What was measured on the server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sizes {
    /// The COMPOUNDs', if measured.
    pub compound: Option<CompoundSizes>,
    /// The READ's, if a file was named and measured.
    pub read: Option<ReadSizes>,
    /// Why the named file's READ sizes could not be measured.
    pub read_error: Option<String>,
}

/// A call chosen for its Reply's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// A COMPOUND: pairs, further PUTROOTFH, tag octets.
    Compound {
        /// PUTROOTFH + GETATTR pairs.
        pairs: u32,
        /// Further PUTROOTFH.
        extra: u32,
        /// Octets of tag.
        tag: u32,
    },
    /// A READ of the named file.
    Read {
        /// Octets read.
        count: u32,
    },
}

impl CompoundSizes {
    /// The Send of this COMPOUND (`pairs` at least 1).
    pub fn size(&self, pairs: u32, extra: u32, tag: u32) -> u32 {
        self.first
            + pairs.saturating_sub(1) * self.step
            + extra * self.putrootfh
            + tag / 4 * self.tag_unit
    }

    /// A COMPOUND whose Reply's Send is exactly `target` octets, within
    /// the limits of Linux nfsd before 6.13 (at most [`MAX_OPS`]
    /// operations, a tag of at most [`MAX_TAG`] octets) and in a call of
    /// at most 1 KB: as many pairs as fit, then as few further PUTROOTFH.
    pub fn probe(&self, target: u32) -> Option<Probe> {
        if target < self.first || self.step == 0 || self.putrootfh == 0 {
            return None;
        }
        let most_pairs = ((target - self.first) / self.step + 1).min(MAX_OPS / 2);
        for pairs in (1..=most_pairs).rev() {
            let rest = target - self.size(pairs, 0, 0);
            for extra in 0..=(MAX_OPS - 2 * pairs) {
                let Some(left) = rest.checked_sub(extra * self.putrootfh) else {
                    break;
                };
                let tag = match (left, self.tag_unit) {
                    (0, _) => 0,
                    (_, 0) => continue,
                    (l, u) if l % u == 0 => l / u * 4,
                    _ => continue,
                };
                let fits = tag <= MAX_TAG
                    && sized_compound(pairs, extra, tag).len() + CALL_HEADER <= MAX_CALL;
                if fits {
                    return Some(Probe::Compound { pairs, extra, tag });
                }
            }
        }
        None
    }
}

impl Sizes {
    /// A call whose Reply's Send is exactly `target` octets: a COMPOUND
    /// where one reaches it, else a READ of the named file.
    pub fn probe(&self, target: u32) -> Option<Probe> {
        if let Some(p) = self.compound.as_ref().and_then(|k| k.probe(target)) {
            return Some(p);
        }
        let r = self.read.as_ref()?;
        target
            .checked_sub(r.empty)
            .filter(|count| count % 4 == 0)
            .map(|count| Probe::Read { count })
    }

    /// The call `p` (its xid patched when sent); `None` for a READ
    /// without a measured file (never chosen by [`Sizes::probe`]).
    pub fn call(&self, p: &Probe) -> Option<Vec<u8>> {
        match (p, &self.read) {
            (Probe::Compound { pairs, extra, tag }, _) => {
                Some(sized_compound(*pairs, *extra, *tag))
            }
            (Probe::Read { count }, Some(r)) => Some(read_compound(&r.path, *count)),
            (Probe::Read { .. }, None) => None,
        }
    }

    /// `p` in words.
    pub fn describe(&self, p: &Probe) -> String {
        match (p, &self.read) {
            (Probe::Compound { pairs, extra, tag }, _) => format!(
                "COMPOUND of {pairs} PUTROOTFH + GETATTR, {extra} more PUTROOTFH, a tag of {tag} octets"
            ),
            (Probe::Read { count }, Some(r)) => format!("READ of {count} octets of {}", r.file),
            (Probe::Read { count }, None) => format!("READ of {count} octets"),
        }
    }

    /// Why no call reaches `target`, in words.
    pub fn unreachable(&self, target: u32) -> String {
        let compound = format!(
            "no COMPOUND of at most {MAX_OPS} operations, a {MAX_TAG}-octet tag and 1 KB has a Reply of {target} octets"
        );
        match (&self.read, &self.read_error) {
            (Some(r), _) => format!(
                "{compound}, and a READ of {} has none (its empty READ's Send is {} octets)",
                r.file, r.empty
            ),
            (None, Some(e)) => format!("{compound}, and --file could not be read ({e})"),
            (None, None) => format!("{compound}; --file PATH names a file to READ instead"),
        }
    }
}

/// A successful inline Reply's Send length, or the answer in words.
fn inline_ok(a: &Answer) -> Result<u32, String> {
    match a {
        Answer::Inline {
            len,
            status: Some(0),
            ..
        } => Ok(*len as u32),
        _ => Err(a.describe()),
    }
}

/// Measure the COMPOUNDs' sizes on `s`.
pub(crate) fn measure_compounds(s: &mut Session) -> Result<CompoundSizes, String> {
    let mut send =
        |pairs, extra, tag| inline_ok(&s.call(&sized_compound(pairs, extra, tag), false));
    let said = |what: &str, e: String| format!("{what}: {e}");
    let first = send(1, 0, 0).map_err(|e| said("PUTROOTFH + GETATTR once", e))?;
    let two = send(2, 0, 0).map_err(|e| said("PUTROOTFH + GETATTR twice", e))?;
    let more = send(1, 1, 0).map_err(|e| said("one pair and one more PUTROOTFH", e))?;
    // A server that does not echo the tag (or refuses one) still has
    // sizes: the COMPOUNDs then go without a tag.
    let tagged = send(1, 0, 4).unwrap_or(first);
    let grew = |by: u32| by.checked_sub(first).filter(|&d| d > 0);
    match (grew(two), grew(more)) {
        (Some(step), Some(putrootfh)) => Ok(CompoundSizes {
            first,
            step,
            putrootfh,
            tag_unit: grew(tagged).unwrap_or(0),
        }),
        _ => Err(format!(
            "Sends of {first}, {two} (two pairs) and {more} (one more PUTROOTFH) octets: not growing"
        )),
    }
}

/// Check the COMPOUND sizes where they matter most: the call chosen for a
/// Reply of `target` octets (the largest the first connection takes
/// inline, up to 4 KB), sent on `s`. An inline Reply of another size means
/// the sizes are not linear on this server, so they must not judge it (a
/// Reply refused within the threshold would otherwise be a failure); any
/// other answer (`ERR_CHUNK` from a server that refuses too early, no
/// answer) does not contradict them and is for the threshold checks to
/// judge. What was seen, in words.
pub(crate) fn verify_compounds(
    s: &mut Session,
    k: &CompoundSizes,
    target: u32,
) -> Result<String, String> {
    let Some(Probe::Compound { pairs, extra, tag }) = k.probe(target) else {
        return Ok(format!("no COMPOUND of {target} octets to check"));
    };
    let what = format!("a COMPOUND of {pairs} pairs, {extra} more PUTROOTFH and a {tag}-octet tag");
    match s.call(&sized_compound(pairs, extra, tag), false) {
        Answer::Inline { len, .. } if len as u32 == target => {
            Ok(format!("checked: {what} came inline at {target} octets"))
        }
        Answer::Inline { len, .. } => Err(format!(
            "{what}: a Send of {len} octets, not the {target} predicted"
        )),
        a => Ok(format!(
            "not checked: {what}, {target} octets predicted: {}",
            a.describe()
        )),
    }
}

/// NFS4ERR_GRACE and NFS4ERR_DELAY: a server that will READ, not yet.
const NOT_YET: [u32; 2] = [10013, 10008];

/// How long a READ waits out a grace period: Linux nfsd's is 90 s, and
/// runs to twice the lease while clients reclaim (the run's --deadline
/// bounds it too).
const GRACE_WAIT: Duration = Duration::from_secs(200);

/// Measure the READ sizes of `file` (`path`: its names) on `s`: the Send
/// of a READ of 0 and of 4 octets must differ by 4. A server in its grace
/// period (after a restart it refuses READs with the anonymous stateid)
/// or asking for a delay is waited for, at most [`GRACE_WAIT`].
pub(crate) fn measure_read(
    s: &mut Session,
    file: &str,
    path: Vec<String>,
) -> Result<ReadSizes, String> {
    let said = |what: &str, e: String| format!("READ of {what} octets of {file}: {e}");
    let waited = Instant::now();
    let mut said_so = false;
    let mut read = |count| loop {
        let answer = s.call(&read_compound(&path, count), false);
        let not_yet =
            matches!(answer, Answer::Inline { status: Some(st), .. } if NOT_YET.contains(&st));
        if !not_yet || waited.elapsed() >= GRACE_WAIT {
            return answer;
        }
        if !said_so {
            eprintln!(
                "rpcrdma-cm: conform: the server is in its grace period; waiting to READ {file}"
            );
            said_so = true;
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let empty = inline_ok(&read(0)).map_err(|e| said("0", e))?;
    let four = inline_ok(&read(4)).map_err(|e| said("4", e))?;
    if four != empty + 4 {
        return Err(format!(
            "READs of 0 and 4 octets of {file}: Sends of {empty} and {four} octets (a file of at least 4 octets is needed)"
        ));
    }
    Ok(ReadSizes {
        file: file.into(),
        path,
        empty,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux nfsd's sizes (7.3, the GETATTR of [`sized_compound`]).
    const NFSD: CompoundSizes = CompoundSizes {
        first: 272,
        step: 208,
        putrootfh: 8,
        tag_unit: 4,
    };

    #[test]
    fn every_xdr_unit_from_the_first_reply_to_4k() {
        for target in (NFSD.first..=4100).step_by(4) {
            let Some(Probe::Compound { pairs, extra, tag }) = NFSD.probe(target) else {
                panic!("{target} unreachable");
            };
            assert_eq!(NFSD.size(pairs, extra, tag), target, "{target}");
            assert!(2 * pairs + extra <= MAX_OPS && tag <= MAX_TAG, "{target}");
            assert!(sized_compound(pairs, extra, tag).len() + CALL_HEADER <= MAX_CALL);
        }
    }

    #[test]
    fn without_the_tag_whole_pairs_and_putrootfh() {
        let untagged = CompoundSizes {
            tag_unit: 0,
            ..NFSD
        };
        // Without a tag only multiples of 8 from the first Reply, within
        // 50 operations: the thresholds of 1 and 4 KB still, exactly.
        for target in (untagged.first..=4100).step_by(4) {
            if let Some(Probe::Compound { pairs, extra, tag }) = untagged.probe(target) {
                assert_eq!((tag, untagged.size(pairs, extra, 0)), (0, target));
            }
        }
        for target in [1024, 4096] {
            assert!(untagged.probe(target).is_some(), "{target}");
        }
        assert_eq!(untagged.probe(untagged.first + 4), None);
    }

    #[test]
    fn what_no_compound_reaches() {
        // Not a whole XDR unit, below the first Reply, past the operations.
        assert_eq!(NFSD.probe(1026), None);
        assert_eq!(NFSD.probe(100), None);
        assert_eq!(NFSD.probe(65536), None);
    }

    #[test]
    fn a_read_where_no_compound_reaches() {
        let s = Sizes {
            compound: Some(NFSD),
            read: Some(ReadSizes {
                file: "big".into(),
                path: vec!["big".into()],
                empty: 100,
            }),
            read_error: None,
        };
        assert!(matches!(s.probe(1024), Some(Probe::Compound { .. })));
        assert_eq!(s.probe(65536), Some(Probe::Read { count: 65436 }));
        assert_eq!(s.probe(65538), None);
        assert_eq!(
            s.call(&Probe::Read { count: 8 }),
            Some(read_compound(&["big".into()], 8))
        );
        let no_file = Sizes {
            compound: Some(NFSD),
            ..Sizes::default()
        };
        assert_eq!(no_file.probe(65536), None);
        assert_eq!(no_file.call(&Probe::Read { count: 8 }), None);
        assert!(no_file.unreachable(65536).contains("--file PATH names"));
        let unreadable = Sizes {
            read_error: Some("NFS4ERR_NOENT".into()),
            ..no_file
        };
        assert!(unreadable
            .unreachable(65536)
            .contains("could not be read (NFS4ERR_NOENT)"));
    }
}
