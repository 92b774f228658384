// SPDX-License-Identifier: GPL-2.0

//! The policy: this side's limits from the module's parameters and the
//! transport's own settings, what it advertises, and the send threshold
//! the transport applies, as its tracepoint shows it (for the module's
//! records). Every protocol decision is the core's (`proto/`).

use crate::cm_private::{
    InlineSize, LocalLimits, Negotiated, Nonconformance, PrivateMessage, MESSAGE_LEN,
};
use crate::{Local, Params, Role};
use kernel::prelude::*;

/// The size parameters (send, receive) that apply to `role`; `None` where
/// the transport's own setting applies.
pub(crate) fn sizes_for(p: &Params, role: Role) -> (Option<InlineSize>, Option<InlineSize>) {
    match role {
        Role::Requester => (p.requester_send, p.requester_recv),
        Role::Responder => (p.responder_send, p.responder_recv),
    }
}

/// This side's limits: the size parameters where set, else the transport's
/// setting, never above what the transport can allocate.
pub(crate) fn local_limits(
    local: &Local,
    (send, recv): (Option<InlineSize>, Option<InlineSize>),
    remote_invalidation: bool,
) -> LocalLimits {
    let ceiling = InlineSize::from_bytes(local.ceiling());
    LocalLimits {
        max_send: send
            .unwrap_or(InlineSize::from_bytes(local.max_send))
            .min(ceiling),
        max_recv: recv
            .unwrap_or(InlineSize::from_bytes(local.max_recv))
            .min(ceiling),
        remote_invalidation: remote_invalidation && local.remote_invalidation,
    }
}

/// The responder's limits for a requester that sent `peer`.
///
/// A requester with a conforming message gets a receive size of at most
/// its advertised send size (RFC 8797 section 3.1: it sends no larger
/// message), so the transport's receive buffers follow what it really
/// sends; the thresholds are the same either way. Unlike svcrdma's own
/// sizing there is no 4 KB floor: a requester that sends more than it
/// advertised loses its connection (a local length error on the
/// responder's Receive).
///
/// With `nonconforming_requester_1k` and private data sent, a requester
/// without a conforming message gets a send size of 1 KB, which the Accept
/// advertises and the transport applies (RFC 8797 section 5: the responder
/// MUST assume the requester's 1 KB default). Otherwise `limits` as they
/// are: the transport then holds such a requester to the send size
/// advertised, or to 1 KB if this side sends no message either
/// (`rpcrdma_cm_bound()`, for RFC 8166 clients).
pub(crate) fn responder_limits(
    limits: LocalLimits,
    peer: &Result<PrivateMessage, Nonconformance>,
    p: &Params,
) -> LocalLimits {
    match peer {
        Ok(msg) => limits.with_recv_for(msg),
        Err(_) if p.nonconforming_requester_1k && p.send_private_data => limits.with_default_send(),
        Err(_) => limits,
    }
}

/// Apply `limits` to the transport and write the advertisement, if any.
pub(crate) fn advertise(
    limits: &LocalLimits,
    send_private_data: bool,
    local: &mut Local,
    pdata: &mut [u8],
) -> Result<(usize, Option<PrivateMessage>)> {
    local.max_send = limits.max_send.bytes();
    local.max_recv = limits.max_recv.bytes();
    local.remote_invalidation = limits.remote_invalidation;
    if !send_private_data {
        return Ok((0, None));
    }
    let msg = limits.advertisement();
    pdata
        .get_mut(..MESSAGE_LEN)
        .ok_or(EINVAL)?
        .copy_from_slice(&msg.encode());
    Ok((MESSAGE_LEN, Some(msg)))
}

/// The limits this side negotiates with: its own if it advertised them,
/// else what the peer assumes about a side that sent nothing.
pub(crate) fn negotiating_as(limits: &LocalLimits, advertised: bool) -> &LocalLimits {
    if advertised {
        limits
    } else {
        &LocalLimits::RFC_DEFAULT
    }
}

/// The send threshold the transport applies, as its tracepoint shows it.
///
/// svcrdma does not hold a client that sent no conforming private data to
/// RFC 8797's assumed 1 KB receive size (it may be an RFC 8166 client that
/// sizes Reply chunks by its buffers), only to what this side advertised it
/// sends (1 KB with `nonconforming_requester_1k`), or RFC 8797's 1 KB
/// default if this side sent nothing either.
pub(crate) fn applied_send_threshold(
    role: Role,
    peer: &Option<Result<PrivateMessage, Nonconformance>>,
    limits: &LocalLimits,
    advertised: bool,
    n: &Negotiated,
) -> u32 {
    match (role, peer) {
        (Role::Responder, Some(Err(_))) => negotiating_as(limits, advertised).max_send.bytes(),
        _ => n.send_threshold.bytes(),
    }
}
