// SPDX-License-Identifier: GPL-2.0

//! The boundary to the module's C side: its parameters.
//!
//! This is the module's only FFI. Every function here is a plain getter in
//! `rpcrdma_cm_params.c` that reads one parameter with `READ_ONCE()`.

use crate::cm_private::InlineSize;

mod ffi {
    extern "C" {
        pub(super) fn rpcrdma_cm_param_requester_send_size() -> u32;
        pub(super) fn rpcrdma_cm_param_requester_recv_size() -> u32;
        pub(super) fn rpcrdma_cm_param_responder_send_size() -> u32;
        pub(super) fn rpcrdma_cm_param_responder_recv_size() -> u32;
        pub(super) fn rpcrdma_cm_param_remote_invalidation() -> bool;
        pub(super) fn rpcrdma_cm_param_send_private_data() -> bool;
    }
}

/// A consistent-enough copy of the parameters, taken once per decision.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    /// Client send size to advertise; `None` = the transport's setting.
    pub(crate) requester_send: Option<InlineSize>,
    /// Client receive size to advertise; `None` = the transport's setting.
    pub(crate) requester_recv: Option<InlineSize>,
    /// Server send size to advertise; `None` = the transport's setting.
    pub(crate) responder_send: Option<InlineSize>,
    /// Server receive size to advertise; `None` = the transport's setting.
    pub(crate) responder_recv: Option<InlineSize>,
    /// Offer (client) or use (server) Remote Invalidation.
    pub(crate) remote_invalidation: bool,
    /// Send RFC 8797 private data at all.
    pub(crate) send_private_data: bool,
}

/// A size parameter: 0 means "not set"; the C setter admits only
/// 1024..=262144 otherwise, and the core rounds down to a multiple of 1024.
fn size(bytes: u32) -> Option<InlineSize> {
    (bytes != 0).then(|| InlineSize::from_bytes(bytes))
}

/// Read all parameters.
pub(crate) fn snapshot() -> Params {
    // SAFETY: each getter takes no arguments, touches only a static of the
    // C side of this module with READ_ONCE() and is callable from any context.
    unsafe {
        Params {
            requester_send: size(ffi::rpcrdma_cm_param_requester_send_size()),
            requester_recv: size(ffi::rpcrdma_cm_param_requester_recv_size()),
            responder_send: size(ffi::rpcrdma_cm_param_responder_send_size()),
            responder_recv: size(ffi::rpcrdma_cm_param_responder_recv_size()),
            remote_invalidation: ffi::rpcrdma_cm_param_remote_invalidation(),
            send_private_data: ffi::rpcrdma_cm_param_send_private_data(),
        }
    }
}
