// SPDX-License-Identifier: GPL-2.0

//! librdmacm and libibverbs for `rpcrdma-cm`: a small safe API over the
//! raw bindings of the `rdmacm-sys` crate: connect a reliable
//! connection to an RDMA listener with chosen CM private data, see what the
//! responder sent, exchange Send messages (and see whether a Send came
//! With Invalidate), offer memory for the peer's RDMA Writes, disconnect;
//! and the other end: listen, see each requester's private data, accept
//! with chosen private data or reject.
//!
//! All `unsafe` of the tools is in this crate (the raw declarations are
//! `rdmacm-sys`'s).

use std::ffi::CStr;
use std::fmt;
use std::net::SocketAddr;
use std::ptr;
use std::time::{Duration, Instant};

use rdmacm_sys as sys;

/// The most private data a REQ carries through the RDMA CM (92 octets of
/// the IB CM REQ less the RDMA CM's 36-octet header).
pub const MAX_REQ_PRIVATE_DATA: usize = 56;

/// The most private data an accept carries through the RDMA CM (the IB CM
/// REP's 196 octets; the RDMA CM adds no header to a REP).
pub const MAX_REP_PRIVATE_DATA: usize = 196;

/// The most private data a reject carries (the IB CM REJ's 148 octets).
pub const MAX_REJ_PRIVATE_DATA: usize = 148;

/// Responder resources and initiator depth that let librdmacm take the
/// smaller of the request's and the device's (rdma_cma.h).
const RDMA_MAX_RESOURCES: u8 = 0xff;

/// Linux address families (sys/socket.h).
const AF_INET: u16 = 2;
/// See [`AF_INET`].
const AF_INET6: u16 = 10;

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A library call failed with `errno`.
    Call {
        /// The function.
        what: &'static str,
        /// The OS error.
        errno: i32,
    },
    /// Waited too long for `what`.
    Timeout {
        /// What was awaited.
        what: &'static str,
    },
    /// The CM reported `event` (status `status`) while waiting for `want`.
    Event {
        /// The event awaited.
        want: &'static str,
        /// The event received, as librdmacm names it.
        event: String,
        /// Its status (an errno, or for REJECTED the IB CM reject reason).
        status: i32,
    },
    /// The responder rejected the connection.
    Rejected {
        /// The reject reason (IB CM reason code; 28 is "consumer reject").
        status: i32,
        /// The private data of the reject.
        private_data: Vec<u8>,
    },
    /// A work completion failed.
    Completion {
        /// Send or receive.
        what: &'static str,
        /// The status, as libibverbs names it.
        status: String,
        /// The status as libibverbs numbers it (`ibv_wc_status`).
        code: u32,
        /// A receive that completed with `IBV_WC_REM_INV_REQ_ERR`: on
        /// rxe, how a Send With Invalidate of an STag this side cannot
        /// invalidate (a user memory region) shows; in general the status
        /// means only "remote invalid request", so this is a hint.
        invalidate_refused: bool,
    },
    /// Bad arguments.
    Invalid(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Call { what, errno } => {
                write!(f, "{what}: {}", std::io::Error::from_raw_os_error(*errno))?;
                if *errno == 19 {
                    // ENODEV: librdmacm found no RDMA device at all.
                    f.write_str(" (no RDMA device; e.g. rdma link add rxe0 type rxe netdev eth0)")?;
                }
                Ok(())
            }
            Error::Timeout { what } => write!(f, "timed out waiting for {what}"),
            Error::Event {
                want,
                event,
                status,
            } => write!(f, "{event} (status {status}) instead of {want}"),
            Error::Rejected { status, .. } => {
                write!(f, "connection rejected by the responder (reason {status})")
            }
            Error::Completion { what, status, .. } => write!(f, "{what} completion: {status}"),
            Error::Invalid(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// Whether this is a work request flushed because the QP left RTS (the
    /// peer disconnected, or the connection failed).
    ///
    /// A Send that failed on this side for its memory or the QP's local
    /// state is `IBV_WC_LOC_PROT_ERR` (siw reports any local transmit
    /// failure, an invalidated STag included, as `IBV_WC_LOC_QP_OP_ERR`):
    /// [`Error::is_local_send_failure`].
    pub fn is_flush(&self) -> bool {
        matches!(self, Error::Completion { code, .. } if *code == sys::IBV_WC_WR_FLUSH_ERR)
    }

    /// Whether this is a Send that failed on this side for its memory or
    /// the QP's local state (see [`Error::is_flush`] for a flushed one).
    pub fn is_local_send_failure(&self) -> bool {
        matches!(self, Error::Completion { what: "send", code, .. }
            if *code == sys::IBV_WC_LOC_PROT_ERR || *code == sys::IBV_WC_LOC_QP_OP_ERR)
    }
}

/// The last OS error number.
fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `Err` with errno if `ret` is non-zero.
fn check(what: &'static str, ret: i32) -> Result<(), Error> {
    if ret == 0 {
        Ok(())
    } else {
        Err(Error::Call {
            what,
            errno: errno(),
        })
    }
}

/// librdmacm's name of a CM event.
fn event_name(event: sys::rdma_cm_event_type) -> String {
    // SAFETY: rdma_event_str returns a pointer to a static string for any
    // value, known or not.
    let s = unsafe { sys::rdma_event_str(event) };
    if s.is_null() {
        return format!("event {event}");
    }
    // SAFETY: non-null, NUL-terminated, static.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

/// libibverbs' name of a work completion status.
fn wc_status_name(status: sys::ibv_wc_status) -> String {
    // SAFETY: ibv_wc_status_str returns a static string for any value.
    let s = unsafe { sys::ibv_wc_status_str(status) };
    if s.is_null() {
        return format!("status {status}");
    }
    // SAFETY: non-null, NUL-terminated, static.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

/// A CM event, copied out before it is acknowledged.
struct Event {
    /// Its type.
    kind: sys::rdma_cm_event_type,
    /// The id it is about (for a connect request: the new id, which the
    /// receiver of the event owns).
    id: *mut sys::rdma_cm_id,
    /// Its status.
    status: i32,
    /// The private data it carried (connection events only).
    private_data: Vec<u8>,
}

/// An event channel: the CM's events for our id.
struct Channel(*mut sys::rdma_event_channel);

impl Channel {
    /// A new event channel.
    fn new() -> Result<Self, Error> {
        // SAFETY: no arguments; returns null or a channel we own.
        let ch = unsafe { sys::rdma_create_event_channel() };
        if ch.is_null() {
            return Err(Error::Call {
                what: "rdma_create_event_channel",
                errno: errno(),
            });
        }
        Ok(Channel(ch))
    }

    /// The next event, waiting until `deadline`.
    fn next(&self, deadline: Instant, what: &'static str) -> Result<Event, Error> {
        // SAFETY: self.0 is a live channel; fd is a plain int field.
        let fd = unsafe { (*self.0).fd };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout { what });
            }
            let mut p = sys::pollfd {
                fd,
                events: sys::POLLIN as i16,
                revents: 0,
            };
            let ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
            // SAFETY: one valid pollfd, count 1.
            let n = unsafe { sys::poll(&mut p, 1, ms) };
            if n < 0 {
                let e = errno();
                if e == 4 {
                    // EINTR
                    continue;
                }
                return Err(Error::Call {
                    what: "poll",
                    errno: e,
                });
            }
            if n == 0 {
                continue;
            }
            let mut ev: *mut sys::rdma_cm_event = ptr::null_mut();
            // SAFETY: live channel; ev receives an event we must ack.
            check("rdma_get_cm_event", unsafe {
                sys::rdma_get_cm_event(self.0, &mut ev)
            })?;
            // SAFETY: rdma_get_cm_event succeeded, so ev points at a valid
            // event until it is acknowledged below.
            let e = unsafe { &*ev };
            let private_data = match e.event {
                sys::RDMA_CM_EVENT_ESTABLISHED
                | sys::RDMA_CM_EVENT_REJECTED
                | sys::RDMA_CM_EVENT_CONNECT_REQUEST
                | sys::RDMA_CM_EVENT_CONNECT_RESPONSE => {
                    // SAFETY: for connection events the union holds `conn`.
                    let conn = unsafe { e.param.conn };
                    if conn.private_data.is_null() {
                        Vec::new()
                    } else {
                        // SAFETY: librdmacm gives private_data_len octets at
                        // private_data, valid until the ack.
                        unsafe {
                            std::slice::from_raw_parts(
                                conn.private_data.cast::<u8>(),
                                usize::from(conn.private_data_len),
                            )
                        }
                        .to_vec()
                    }
                }
                _ => Vec::new(),
            };
            let copy = Event {
                kind: e.event,
                id: e.id,
                status: e.status,
                private_data,
            };
            // SAFETY: ev came from rdma_get_cm_event and is acked once; no
            // reference into it outlives this call.
            unsafe { sys::rdma_ack_cm_event(ev) };
            return Ok(copy);
        }
    }

    /// Wait for an event of type `want`; any other is an error.
    fn expect(
        &self,
        want: sys::rdma_cm_event_type,
        deadline: Instant,
        what: &'static str,
    ) -> Result<Event, Error> {
        let e = self.next(deadline, what)?;
        if e.kind == want {
            return Ok(e);
        }
        if e.kind == sys::RDMA_CM_EVENT_REJECTED {
            return Err(Error::Rejected {
                status: e.status,
                private_data: e.private_data,
            });
        }
        Err(Error::Event {
            want: what,
            event: event_name(e.kind),
            status: e.status,
        })
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // SAFETY: the channel is ours and every id on it was destroyed
        // first (Connection's field order).
        unsafe { sys::rdma_destroy_event_channel(self.0) };
    }
}

/// The STag a successful receive completion `wc` of this crate's RC QP
/// says the Send invalidated, if it came With Invalidate.
///
/// A completion the kernel writes for user space carries the kernel's
/// flags as they are (`copy_wc_to_user()` in uverbs_cmd.c, and rxe's own
/// user completion queue: `rxe_resp.c` sets `IB_WC_WITH_INVALIDATE`),
/// which libibverbs reads unconverted: the kernel's With Invalidate is bit
/// 2 (`ib_verbs.h`), libibverbs' bit 2 is `IBV_WC_IP_CSUM_OK` and its
/// `IBV_WC_WITH_INV` bit 3. A checksum verdict has no meaning on an RC
/// receive (the flag is for raw packet and UD QPs), so bit 2 on a receive
/// without immediate data (the union then holds the rkey) and with a
/// non-zero rkey there (rxe zeroes its completion before filling it) is
/// taken as the kernel's With Invalidate.
fn invalidated_rkey(wc: &sys::ibv_wc) -> Option<u32> {
    // SAFETY: the union is a plain u32 either way (immediate data or the
    // invalidated rkey); with IBV_WC_WITH_INV (or the kernel's bit) it
    // holds the rkey (verbs.h).
    let rkey = unsafe { wc.__bindgen_anon_1.invalidated_rkey };
    let kernel_bit = wc.wc_flags & sys::IBV_WC_IP_CSUM_OK != 0
        && wc.wc_flags & sys::IBV_WC_WITH_IMM == 0
        && rkey != 0;
    if wc.wc_flags & sys::IBV_WC_WITH_INV != 0 || kernel_bit {
        Some(rkey)
    } else {
        None
    }
}

/// A registered buffer.
struct Buffer {
    /// The memory; its heap address never moves.
    mem: Box<[u8]>,
    /// Its registration.
    mr: *mut sys::ibv_mr,
}

impl Buffer {
    /// `len` zeroed octets registered with `pd` for local writes.
    fn new(pd: *mut sys::ibv_pd, len: usize) -> Result<Self, Error> {
        Self::with_access(pd, len, sys::IBV_ACCESS_LOCAL_WRITE)
    }

    /// `len` zeroed octets registered with `pd` with `access`.
    fn with_access(
        pd: *mut sys::ibv_pd,
        len: usize,
        access: sys::ibv_access_flags,
    ) -> Result<Self, Error> {
        let mut mem = vec![0u8; len.max(1)].into_boxed_slice();
        // SAFETY: pd is a live protection domain; mem stays allocated (and
        // at the same address) until the MR is deregistered in drop.
        let mr = unsafe { sys::ibv_reg_mr(pd, mem.as_mut_ptr().cast(), mem.len(), access as i32) };
        if mr.is_null() {
            return Err(Error::Call {
                what: "ibv_reg_mr",
                errno: errno(),
            });
        }
        Ok(Buffer { mem, mr })
    }

    /// A scatter/gather entry for the first `len` octets.
    fn sge(&mut self, len: usize) -> sys::ibv_sge {
        sys::ibv_sge {
            addr: self.mem.as_mut_ptr() as u64,
            length: u32::try_from(len.min(self.mem.len())).unwrap_or(u32::MAX),
            // SAFETY: mr is live while self is.
            lkey: unsafe { (*self.mr).lkey },
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: mr was registered by us; the QP using it was destroyed
        // before (Connection::drop), and a memory window bound to it was
        // deallocated before (`Offered`'s drop runs before its fields').
        unsafe { sys::ibv_dereg_mr(self.mr) };
    }
}

/// Memory offered to the peer, and the STag it was offered under.
struct Offered {
    /// The memory and its registration.
    buf: Buffer,
    /// The STag the peer was given: the window's if `window` is not null,
    /// the memory region's otherwise.
    handle: u32,
    /// The type 2 memory window bound over `buf` (null: the memory
    /// region's own rkey was offered).
    window: *mut sys::ibv_mw,
}

impl Offered {
    /// Deallocate the window, if any (a bound one is invalidated first by
    /// the provider): the STag is then unknown to the device, so that a
    /// later Send With Invalidate naming it fails as an unknown STag. On
    /// rxe a bound type 2 window holds a reference to the QP that
    /// `rdma_destroy_qp()` waits 50 s for, so this comes before the QP is
    /// destroyed; and rxe does not refuse a second remote invalidation of
    /// a window already invalidated (`rxe_check_invalidate_mw()` checks
    /// only the INVALID state, and `rxe_do_invalidate_mw()` then puts a
    /// NULL QP), so a window is released as soon as it is reported
    /// invalidated.
    fn release_window(&mut self) {
        if self.window.is_null() {
            return;
        }
        // SAFETY: the window was allocated by us from a context whose ops
        // table stays valid while the device is open (libibverbs fills a
        // missing op with one that fails); it is deallocated once (the
        // pointer is cleared), before `buf` deregisters the memory it is
        // bound to.
        unsafe {
            if let Some(dealloc) = (*(*self.window).context).ops.dealloc_mw {
                dealloc(self.window);
            }
        }
        self.window = ptr::null_mut();
    }
}

impl Drop for Offered {
    fn drop(&mut self) {
        self.release_window();
    }
}

/// How offered memory is named to the peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionKind {
    /// A type 2 memory window bound over a memory region: the STag a
    /// peer may invalidate remotely (InfiniBand and RoCE HCAs, rxe).
    Window,
    /// The memory region's own rkey (siw and devices without type 2
    /// windows): a hardware HCA refuses to invalidate it remotely.
    Region,
}

/// What this side asks of the connection.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Private data of the REQ; `None` for none. At most
    /// [`MAX_REQ_PRIVATE_DATA`] octets.
    pub private_data: Option<Vec<u8>>,
    /// Time allowed for address and route resolution and for the connection.
    pub timeout: Duration,
    /// Receive work requests the QP can hold.
    pub max_recv: u32,
}

/// A connected RC queue pair with its CM id.
///
/// Fields are dropped in order after [`Drop::drop`] has destroyed the QP:
/// buffers, then the CQ and PD (in `drop`), the id, the channel.
pub struct Connection {
    /// Receive buffers, indexed by work request id.
    recv: Vec<Buffer>,
    /// The send buffer.
    send: Option<Buffer>,
    /// Whether a send is outstanding.
    send_busy: bool,
    /// Received messages not yet handed out (receive completed while
    /// waiting for a send completion).
    received: std::collections::VecDeque<Message>,
    /// Memory offered to the peer for RDMA Writes.
    remote: Vec<Offered>,
    /// Whether the device binds type 2 memory windows (asked once).
    windows: Option<bool>,
    /// The protection domain (null until allocated).
    pd: *mut sys::ibv_pd,
    /// The completion queue of both send and receive (null until created).
    cq: *mut sys::ibv_cq,
    /// The CM id, owner of the QP.
    id: *mut sys::rdma_cm_id,
    /// Whether the connection was established and not yet disconnected.
    connected: bool,
    /// Whether the CM reported the disconnection already.
    disconnected: bool,
    /// The id's event channel; destroyed last.
    channel: Channel,
}

/// A received Send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Its octets.
    pub data: Vec<u8>,
    /// The STag it invalidated, if it came as Send With Invalidate.
    pub invalidated_rkey: Option<u32>,
}

/// Memory this side offers for the peer's RDMA Writes (an RPC-over-RDMA
/// Write or Reply chunk segment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteRegion {
    /// The STag (rkey) the peer writes with.
    pub handle: u32,
    /// The address the peer writes at.
    pub offset: u64,
    /// Octets offered.
    pub length: u32,
    /// Whether `handle` is a memory window's or the region's own.
    pub kind: RegionKind,
}

/// What the responder sent when it accepted.
#[derive(Debug)]
pub struct Accepted {
    /// The connection.
    pub connection: Connection,
    /// The private data of the accept (REP), as the CM delivered it:
    /// on InfiniBand and RoCE padded with zeros to the REP's size.
    pub private_data: Vec<u8>,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("connected", &self.connected)
            .field("recv_buffers", &self.recv.len())
            .finish()
    }
}

/// `addr` as a `sockaddr_storage`.
fn sockaddr(addr: SocketAddr) -> sys::sockaddr_storage {
    // SAFETY: sockaddr_storage is plain old data; all zeros is valid.
    let mut ss: sys::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            let sin = sys::sockaddr_in {
                sin_family: AF_INET,
                sin_port: a.port().to_be(),
                sin_addr: sys::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage, which is
            // suitably aligned for it.
            unsafe { ptr::write((&mut ss as *mut sys::sockaddr_storage).cast(), sin) };
        }
        SocketAddr::V6(a) => {
            let sin6 = sys::sockaddr_in6 {
                sin6_family: AF_INET6,
                sin6_port: a.port().to_be(),
                // As std converts it: SocketAddrV6 keeps sin6_flowinfo
                // as found in (or meant for) a sockaddr_in6.
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: sys::in6_addr {
                    __in6_u: sys::in6_addr__bindgen_ty_1 {
                        __u6_addr8: a.ip().octets(),
                    },
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above, for sockaddr_in6.
            unsafe { ptr::write((&mut ss as *mut sys::sockaddr_storage).cast(), sin6) };
        }
    }
    ss
}

/// Connection parameters carrying `pdata` (empty: no private data), with
/// `resources` responder resources and initiator depth.
fn conn_param(pdata: &[u8], resources: u8) -> sys::rdma_conn_param {
    sys::rdma_conn_param {
        private_data: if pdata.is_empty() {
            ptr::null()
        } else {
            pdata.as_ptr().cast()
        },
        private_data_len: u8::try_from(pdata.len()).unwrap_or(0),
        responder_resources: resources,
        initiator_depth: resources,
        flow_control: 1,
        retry_count: 7,
        rnr_retry_count: 7,
        srq: 0,
        qp_num: 0,
    }
}

/// Milliseconds left until `deadline`, at least 1, as a C int.
fn ms_left(deadline: Instant) -> i32 {
    let left = deadline.saturating_duration_since(Instant::now());
    i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX)
}

impl Connection {
    /// Resolve `dst`, create an RC QP and connect with `opts`; returns the
    /// connection and the private data of the accept.
    pub fn connect(dst: SocketAddr, opts: &ConnectOptions) -> Result<Accepted, Error> {
        let pdata = opts.private_data.as_deref().unwrap_or(&[]);
        if pdata.len() > MAX_REQ_PRIVATE_DATA {
            return Err(Error::Invalid(format!(
                "{} octets of private data: the RDMA CM carries at most {MAX_REQ_PRIVATE_DATA} in a request",
                pdata.len()
            )));
        }
        let deadline = Instant::now() + opts.timeout;
        let channel = Channel::new()?;
        let mut id: *mut sys::rdma_cm_id = ptr::null_mut();
        // SAFETY: live channel; id receives a new id owned by `conn` below.
        check("rdma_create_id", unsafe {
            sys::rdma_create_id(channel.0, &mut id, ptr::null_mut(), sys::RDMA_PS_TCP)
        })?;
        let mut conn = Connection::new(id, channel);
        let mut dst_ss = sockaddr(dst);
        // SAFETY: live id; dst_ss is a valid sockaddr for the call.
        check("rdma_resolve_addr", unsafe {
            sys::rdma_resolve_addr(
                conn.id,
                ptr::null_mut(),
                (&mut dst_ss as *mut sys::sockaddr_storage).cast(),
                ms_left(deadline),
            )
        })?;
        conn.channel.expect(
            sys::RDMA_CM_EVENT_ADDR_RESOLVED,
            deadline,
            "address resolution",
        )?;
        // SAFETY: live id with a resolved address.
        check("rdma_resolve_route", unsafe {
            sys::rdma_resolve_route(conn.id, ms_left(deadline))
        })?;
        conn.channel.expect(
            sys::RDMA_CM_EVENT_ROUTE_RESOLVED,
            deadline,
            "route resolution",
        )?;
        conn.create_qp(opts.max_recv)?;
        let mut param = conn_param(pdata, 1);
        // SAFETY: live id with a QP; param and the private data it points
        // at are valid for the call (librdmacm copies them).
        check("rdma_connect", unsafe {
            sys::rdma_connect(conn.id, &mut param)
        })?;
        let ev = conn.channel.expect(
            sys::RDMA_CM_EVENT_ESTABLISHED,
            deadline,
            "the connection to be established",
        )?;
        conn.connected = true;
        Ok(Accepted {
            connection: conn,
            private_data: ev.private_data,
        })
    }

    /// A connection that owns `id` (on `channel`), with nothing
    /// allocated yet.
    fn new(id: *mut sys::rdma_cm_id, channel: Channel) -> Self {
        Connection {
            recv: Vec::new(),
            send: None,
            send_busy: false,
            received: Default::default(),
            remote: Vec::new(),
            windows: None,
            pd: ptr::null_mut(),
            cq: ptr::null_mut(),
            id,
            connected: false,
            disconnected: false,
            channel,
        }
    }

    /// Allocate the PD and CQ and create the RC QP on the id, which is
    /// bound to a device.
    fn create_qp(&mut self, max_recv: u32) -> Result<(), Error> {
        // SAFETY: live id; verbs is a plain pointer field, set when the
        // id was bound to a device (null if it was not).
        let verbs = unsafe { (*self.id).verbs };
        if verbs.is_null() {
            return Err(Error::Invalid(
                "the route resolved without binding an RDMA device".into(),
            ));
        }
        // SAFETY: verbs is the id's live device context, checked non-null.
        self.pd = unsafe { sys::ibv_alloc_pd(verbs) };
        if self.pd.is_null() {
            return Err(Error::Call {
                what: "ibv_alloc_pd",
                errno: errno(),
            });
        }
        let cqe = i32::try_from(max_recv).unwrap_or(1024).saturating_add(8);
        // SAFETY: live context; no completion channel, vector 0.
        self.cq = unsafe { sys::ibv_create_cq(verbs, cqe, ptr::null_mut(), ptr::null_mut(), 0) };
        if self.cq.is_null() {
            return Err(Error::Call {
                what: "ibv_create_cq",
                errno: errno(),
            });
        }
        let mut attr = sys::ibv_qp_init_attr {
            qp_context: ptr::null_mut(),
            send_cq: self.cq,
            recv_cq: self.cq,
            srq: ptr::null_mut(),
            cap: sys::ibv_qp_cap {
                max_send_wr: 4,
                max_recv_wr: max_recv.max(1),
                max_send_sge: 1,
                max_recv_sge: 1,
                max_inline_data: 0,
            },
            qp_type: sys::IBV_QPT_RC,
            sq_sig_all: 0,
        };
        // SAFETY: live id, pd and cq; attr is valid for the call.
        check("rdma_create_qp", unsafe {
            sys::rdma_create_qp(self.id, self.pd, &mut attr)
        })?;
        Ok(())
    }

    /// Post `count` receives of `size` octets each (before the peer may
    /// send). May be called once.
    pub fn post_receives(&mut self, count: u32, size: usize) -> Result<(), Error> {
        if !self.recv.is_empty() {
            return Err(Error::Invalid("receives already posted".into()));
        }
        for i in 0..count as usize {
            self.recv.push(Buffer::new(self.pd, size)?);
            self.repost(i)?;
        }
        Ok(())
    }

    /// Post receive buffer `i` (again).
    fn repost(&mut self, i: usize) -> Result<(), Error> {
        let mut sge = self.recv[i].sge(usize::MAX);
        let mut wr = sys::ibv_recv_wr {
            wr_id: i as u64,
            next: ptr::null_mut(),
            sg_list: &mut sge,
            num_sge: 1,
        };
        let mut bad: *mut sys::ibv_recv_wr = ptr::null_mut();
        // SAFETY: the id's QP is live; the ops table of its context is the
        // provider's; wr and sge are valid for the call and the buffer
        // stays registered until the QP is destroyed.
        let ret = unsafe {
            let qp = (*self.id).qp;
            let post = (*(*qp).context)
                .ops
                .post_recv
                .ok_or(Error::Invalid("the provider has no post_recv".into()))?;
            post(qp, &mut wr, &mut bad)
        };
        if ret != 0 {
            return Err(Error::Call {
                what: "ibv_post_recv",
                errno: ret,
            });
        }
        Ok(())
    }

    /// Send `message` as one Send (signaled); it must fit `max_send` and
    /// the send buffer, which is allocated on first use with that call's
    /// `max_send` octets and keeps that size.
    pub fn send(
        &mut self,
        message: &[u8],
        max_send: usize,
        deadline: Instant,
    ) -> Result<(), Error> {
        self.send_maybe_invalidating(message, max_send, None, deadline)
    }

    /// [`Connection::send`] as a Send With Invalidate of the peer's STag
    /// `rkey`.
    pub fn send_with_invalidate(
        &mut self,
        message: &[u8],
        max_send: usize,
        rkey: u32,
        deadline: Instant,
    ) -> Result<(), Error> {
        self.send_maybe_invalidating(message, max_send, Some(rkey), deadline)
    }

    /// A Send, With Invalidate of `invalidate` if given.
    fn send_maybe_invalidating(
        &mut self,
        message: &[u8],
        max_send: usize,
        invalidate: Option<u32>,
        deadline: Instant,
    ) -> Result<(), Error> {
        if message.len() > max_send {
            return Err(Error::Invalid(format!(
                "{} octets exceed the send size {max_send}",
                message.len()
            )));
        }
        while self.send_busy {
            self.poll_once(deadline, "a send completion")?;
        }
        if self.send.is_none() {
            self.send = Some(Buffer::new(self.pd, max_send)?);
        }
        let buf = self
            .send
            .as_mut()
            .ok_or(Error::Invalid("no send buffer".into()))?;
        // The buffer keeps the size of the first call's max_send.
        let Some(dst) = buf.mem.get_mut(..message.len()) else {
            return Err(Error::Invalid(format!(
                "{} octets exceed the send buffer of {} octets (sized by the first send)",
                message.len(),
                buf.mem.len()
            )));
        };
        dst.copy_from_slice(message);
        let sge = buf.sge(message.len());
        self.post_send(sge, invalidate)
    }

    /// Post one signaled Send of `sge` (registered memory that stays
    /// registered until the QP is destroyed), With Invalidate of the
    /// peer's STag `invalidate` if given, and mark it outstanding.
    fn post_send(&mut self, mut sge: sys::ibv_sge, invalidate: Option<u32>) -> Result<(), Error> {
        // SAFETY: ibv_send_wr is plain old data; zeros are valid.
        let mut wr: sys::ibv_send_wr = unsafe { std::mem::zeroed() };
        wr.sg_list = &mut sge;
        wr.num_sge = 1;
        wr.opcode = sys::IBV_WR_SEND;
        if let Some(rkey) = invalidate {
            wr.opcode = sys::IBV_WR_SEND_WITH_INV;
            wr.__bindgen_anon_1.invalidate_rkey = rkey;
        }
        self.post_send_wr(wr)
    }

    /// Post `wr` signaled on the send queue (its wr_id that of this
    /// side's sends) and mark it outstanding. Whatever its scatter list
    /// or bind names stays registered until the QP is destroyed.
    fn post_send_wr(&mut self, mut wr: sys::ibv_send_wr) -> Result<(), Error> {
        wr.wr_id = u64::MAX;
        wr.next = ptr::null_mut();
        wr.send_flags = sys::IBV_SEND_SIGNALED;
        let mut bad: *mut sys::ibv_send_wr = ptr::null_mut();
        // SAFETY: as in repost, for the send queue; the caller's memory
        // behind wr stays registered until the QP is destroyed.
        let ret = unsafe {
            let qp = (*self.id).qp;
            let post = (*(*qp).context)
                .ops
                .post_send
                .ok_or(Error::Invalid("the provider has no post_send".into()))?;
            post(qp, &mut wr, &mut bad)
        };
        if ret != 0 {
            return Err(Error::Call {
                what: "ibv_post_send",
                errno: ret,
            });
        }
        self.send_busy = true;
        Ok(())
    }

    /// Handle one completion, waiting until `deadline`.
    fn poll_once(&mut self, deadline: Instant, what: &'static str) -> Result<(), Error> {
        let mut spins = 0u32;
        loop {
            // SAFETY: ibv_wc is plain old data; zeros are valid.
            let mut wc: sys::ibv_wc = unsafe { std::mem::zeroed() };
            // SAFETY: live CQ; the provider's poll_cq writes at most one wc.
            let n = unsafe {
                let poll = (*(*self.cq).context)
                    .ops
                    .poll_cq
                    .ok_or(Error::Invalid("the provider has no poll_cq".into()))?;
                poll(self.cq, 1, &mut wc)
            };
            if n < 0 {
                return Err(Error::Call {
                    what: "ibv_poll_cq",
                    errno: -n,
                });
            }
            if n == 1 {
                let is_send = wc.wr_id == u64::MAX;
                if is_send {
                    // Completed, successfully or not: the send buffer is
                    // free again and the next send need not wait.
                    self.send_busy = false;
                }
                if wc.status != sys::IBV_WC_SUCCESS {
                    return Err(Error::Completion {
                        what: if is_send { "send" } else { "receive" },
                        status: wc_status_name(wc.status),
                        code: wc.status,
                        invalidate_refused: !is_send && wc.status == sys::IBV_WC_REM_INV_REQ_ERR,
                    });
                }
                if !is_send {
                    let i = usize::try_from(wc.wr_id).unwrap_or(usize::MAX);
                    let buf = self.recv.get(i).ok_or(Error::Invalid(format!(
                        "receive completion for unknown buffer {i}"
                    )))?;
                    let len = (wc.byte_len as usize).min(buf.mem.len());
                    let invalidated_rkey = invalidated_rkey(&wc);
                    if let Some(k) = invalidated_rkey {
                        self.remote
                            .iter_mut()
                            .filter(|o| o.handle == k)
                            .for_each(Offered::release_window);
                    }
                    self.received.push_back(Message {
                        data: buf.mem[..len].to_vec(),
                        invalidated_rkey,
                    });
                    self.repost(i)?;
                }
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout { what });
            }
            // Spin briefly for a low round trip, then yield the CPU.
            spins += 1;
            if spins > 2000 {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// The next received message, waiting until `deadline`.
    pub fn receive(&mut self, deadline: Instant) -> Result<Vec<u8>, Error> {
        self.receive_message(deadline).map(|m| m.data)
    }

    /// The next received message and how it came, waiting until `deadline`.
    pub fn receive_message(&mut self, deadline: Instant) -> Result<Message, Error> {
        loop {
            if let Some(m) = self.received.pop_front() {
                return Ok(m);
            }
            self.poll_once(deadline, "a receive")?;
        }
    }

    /// Send `message` from the memory of `region` (an earlier
    /// [`Connection::offer_remote_write`]) and wait for the Send's
    /// completion: it fails (a local protection error) if the peer has
    /// invalidated the region's STag meanwhile, which is how a Send With
    /// Invalidate shows on a provider that does not report it in the
    /// receive completion.
    pub fn send_from_region(
        &mut self,
        region: &RemoteRegion,
        message: &[u8],
        deadline: Instant,
    ) -> Result<(), Error> {
        while self.send_busy {
            self.poll_once(deadline, "a send completion")?;
        }
        let buf = &mut self
            .remote
            .iter_mut()
            .find(|o| o.handle == region.handle)
            .ok_or(Error::Invalid("no such region".into()))?
            .buf;
        if message.len() > buf.mem.len() {
            return Err(Error::Invalid("the message exceeds the region".into()));
        }
        // SAFETY: within the buffer (checked); through a raw pointer, not
        // a reference, since the peer may write this memory by RDMA as
        // long as its STag is valid.
        unsafe {
            ptr::copy_nonoverlapping(message.as_ptr(), buf.mem.as_mut_ptr(), message.len());
        }
        let sge = buf.sge(message.len());
        self.post_send(sge, None)?;
        while self.send_busy {
            self.poll_once(deadline, "a send completion")?;
        }
        Ok(())
    }

    /// Register `len` zeroed octets the peer may RDMA Write into, kept
    /// until the connection is dropped. Where the device binds type 2
    /// memory windows the STag offered is a window's bound over them (the
    /// kind of STag a peer may invalidate remotely, so that a Send With
    /// Invalidate completes and names it); elsewhere the region's own
    /// rkey.
    /// The bind waits for its completion until `deadline`; a failed bind
    /// leaves the QP in error, as any failed work request.
    pub fn offer_remote_write(
        &mut self,
        len: u32,
        deadline: Instant,
    ) -> Result<RemoteRegion, Error> {
        if self.binds_windows() {
            if let Some(region) = self.offer_window(len, deadline)? {
                return Ok(region);
            }
            // The provider could not allocate one after all.
            self.windows = Some(false);
        }
        let mut buf = Buffer::with_access(
            self.pd,
            len as usize,
            sys::IBV_ACCESS_LOCAL_WRITE | sys::IBV_ACCESS_REMOTE_WRITE,
        )?;
        // SAFETY: mr is live while buf is.
        let handle = unsafe { (*buf.mr).rkey };
        let region = RemoteRegion {
            handle,
            offset: buf.mem.as_mut_ptr() as u64,
            length: len,
            kind: RegionKind::Region,
        };
        self.remote.push(Offered {
            buf,
            handle,
            window: ptr::null_mut(),
        });
        Ok(region)
    }

    /// Whether the device says it binds type 2 memory windows (asked once
    /// per connection; a provider that then cannot allocate one turns it
    /// off).
    fn binds_windows(&mut self) -> bool {
        if let Some(known) = self.windows {
            return known;
        }
        // SAFETY: ibv_device_attr is plain old data; zeros are valid.
        let mut attr: sys::ibv_device_attr = unsafe { std::mem::zeroed() };
        // SAFETY: live id bound to a device (the QP exists); verbs is its
        // context, whose ops table the provider filled; attr is valid for
        // the call.
        let known = unsafe {
            let verbs = (*self.id).verbs;
            !verbs.is_null()
                && sys::ibv_query_device(verbs, &mut attr) == 0
                && attr.max_mw > 0
                && attr.device_cap_flags
                    & (sys::IBV_DEVICE_MEM_WINDOW_TYPE_2A | sys::IBV_DEVICE_MEM_WINDOW_TYPE_2B)
                    != 0
        };
        self.windows = Some(known);
        known
    }

    /// [`Connection::offer_remote_write`] through a type 2 memory window:
    /// allocate it, bind it over new memory with a Bind work request on
    /// this QP (remote write only) and wait until `deadline` for the
    /// bind's completion. `None` if the provider cannot allocate a window.
    fn offer_window(&mut self, len: u32, deadline: Instant) -> Result<Option<RemoteRegion>, Error> {
        while self.send_busy {
            self.poll_once(deadline, "a send completion")?;
        }
        // Local write only (what binding a window with remote write needs,
        // IBA C10-74): the memory is remotely writable through the window
        // alone, and not once the window is invalidated.
        let mut buf = Buffer::with_access(
            self.pd,
            len as usize,
            sys::IBV_ACCESS_LOCAL_WRITE | sys::IBV_ACCESS_MW_BIND,
        )?;
        let offset = buf.mem.as_mut_ptr() as u64;
        let mr = buf.mr;
        // SAFETY: live PD; its context's ops table is the provider's
        // (libibverbs fills a missing op with one that fails).
        let window = unsafe {
            match (*(*self.pd).context).ops.alloc_mw {
                Some(alloc) => alloc(self.pd, sys::IBV_MW_TYPE_2),
                None => ptr::null_mut(),
            }
        };
        if window.is_null() {
            return Ok(None);
        }
        // A new key in the low octet for this binding (ibv_inc_rkey()).
        // SAFETY: window is live (just allocated).
        let old = unsafe { (*window).rkey };
        let handle = (old & !0xff) | (old.wrapping_add(1) & 0xff);
        // Owned from here: freed with the connection whatever follows.
        self.remote.push(Offered {
            buf,
            handle,
            window,
        });
        // SAFETY: ibv_send_wr is plain old data; zeros are valid.
        let mut wr: sys::ibv_send_wr = unsafe { std::mem::zeroed() };
        wr.opcode = sys::IBV_WR_BIND_MW;
        wr.__bindgen_anon_2.bind_mw = sys::ibv_send_wr__bindgen_ty_4__bindgen_ty_1 {
            mw: window,
            rkey: handle,
            bind_info: sys::ibv_mw_bind_info {
                mr,
                addr: offset,
                length: u64::from(len.max(1)),
                mw_access_flags: sys::IBV_ACCESS_REMOTE_WRITE,
            },
        };
        self.post_send_wr(wr)?;
        while self.send_busy {
            self.poll_once(deadline, "the memory window's bind")?;
        }
        Ok(Some(RemoteRegion {
            handle,
            offset,
            length: len,
            kind: RegionKind::Window,
        }))
    }

    /// Disconnect and wait (until `timeout`) for the CM to confirm.
    pub fn disconnect(mut self, timeout: Duration) -> Result<(), Error> {
        self.connected = false;
        // SAFETY: live, connected id.
        check("rdma_disconnect", unsafe { sys::rdma_disconnect(self.id) })?;
        self.wait_disconnected(timeout)
    }

    /// Wait (until `timeout`) for the CM's DISCONNECTED event.
    fn wait_disconnected(&self, timeout: Duration) -> Result<(), Error> {
        self.channel.expect(
            sys::RDMA_CM_EVENT_DISCONNECTED,
            Instant::now() + timeout,
            "the disconnection",
        )?;
        Ok(())
    }
}

impl Connection {
    /// Disconnect, whoever goes first, and wait (until `timeout`) for the
    /// CM to confirm: the peer may have disconnected already, so the
    /// local disconnect's own failure does not count.
    pub fn close(mut self, timeout: Duration) -> Result<(), Error> {
        self.connected = false;
        if self.disconnected {
            return Ok(());
        }
        // SAFETY: live id.
        unsafe { sys::rdma_disconnect(self.id) };
        self.wait_disconnected(timeout)
    }

    /// Whether the connection runs over iWARP (private data arrives with
    /// the exact length sent) rather than InfiniBand or RoCE (padded).
    pub fn is_iwarp(&self) -> bool {
        // SAFETY: live id; verbs and device are plain pointers set when the
        // id was bound to a device, checked before they are followed.
        unsafe {
            let verbs = (*self.id).verbs;
            !verbs.is_null()
                && !(*verbs).device.is_null()
                && (*(*verbs).device).transport_type == sys::IBV_TRANSPORT_IWARP
        }
    }

    /// Wait until `deadline` for the peer to disconnect; `Ok(true)` if it
    /// did (the connection is then closed on this side too).
    pub fn wait_peer_disconnect(&mut self, deadline: Instant) -> Result<bool, Error> {
        match self.channel.next(deadline, "the peer's disconnection") {
            Ok(e) if e.kind == sys::RDMA_CM_EVENT_DISCONNECTED => {
                self.connected = false;
                self.disconnected = true;
                Ok(true)
            }
            Ok(e) => Err(Error::Event {
                want: "the peer's disconnection",
                event: event_name(e.kind),
                status: e.status,
            }),
            Err(Error::Timeout { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// A listening CM id: connect requests to one address and port.
///
/// The id is destroyed in [`Drop::drop`], before the channel (a field).
pub struct Listener {
    /// The listening id.
    id: *mut sys::rdma_cm_id,
    /// Its event channel, which receives the connect requests.
    channel: Channel,
}

impl fmt::Debug for Listener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listener").finish_non_exhaustive()
    }
}

impl Listener {
    /// Listen on `addr` (the RDMA CM binds it to the device that has the
    /// address; the unspecified address listens on every device).
    pub fn bind(addr: SocketAddr) -> Result<Self, Error> {
        let channel = Channel::new()?;
        let mut id: *mut sys::rdma_cm_id = ptr::null_mut();
        // SAFETY: live channel; id receives a new id owned by `listener`.
        check("rdma_create_id", unsafe {
            sys::rdma_create_id(channel.0, &mut id, ptr::null_mut(), sys::RDMA_PS_TCP)
        })?;
        let listener = Listener { id, channel };
        let mut ss = sockaddr(addr);
        // SAFETY: live id; ss is a valid sockaddr for the call.
        check("rdma_bind_addr", unsafe {
            sys::rdma_bind_addr(listener.id, (&mut ss as *mut sys::sockaddr_storage).cast())
        })?;
        // SAFETY: live, bound id.
        check("rdma_listen", unsafe { sys::rdma_listen(listener.id, 16) })?;
        Ok(listener)
    }

    /// The next connect request, waiting until `deadline`; other events of
    /// the listening id are passed over.
    pub fn next_request(&mut self, deadline: Instant) -> Result<Request<'_>, Error> {
        loop {
            let e = self.channel.next(deadline, "a connect request")?;
            if e.kind == sys::RDMA_CM_EVENT_CONNECT_REQUEST && !e.id.is_null() {
                return Ok(Request {
                    id: e.id,
                    _listener: std::marker::PhantomData,
                    private_data: e.private_data,
                });
            }
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        // SAFETY: the id is ours; requests taken from it own their ids.
        unsafe { sys::rdma_destroy_id(self.id) };
    }
}

/// A connect request not answered yet; rejected if dropped unanswered. It
/// borrows its listener: until accepted, its id's events go to the
/// listener's channel.
pub struct Request<'a> {
    /// The new id the request came on, owned here.
    id: *mut sys::rdma_cm_id,
    /// The listener whose channel the id is on.
    _listener: std::marker::PhantomData<&'a Listener>,
    /// The private data of the request, as the CM delivered it: on
    /// InfiniBand and RoCE padded with zeros to the REQ's 56 octets,
    /// over iWARP as long as the requester sent it.
    pub private_data: Vec<u8>,
}

impl fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("private_data", &self.private_data)
            .finish_non_exhaustive()
    }
}

impl Request<'_> {
    /// Accept with `private_data` (empty: none), with `receives` receives
    /// of `size` octets posted first (the requester may Send as soon as
    /// it sees the connection established), and wait until `timeout` for
    /// the connection to be established.
    pub fn accept(
        self,
        private_data: &[u8],
        receives: u32,
        size: usize,
        timeout: Duration,
    ) -> Result<Connection, Error> {
        if private_data.len() > MAX_REP_PRIVATE_DATA {
            return Err(Error::Invalid(format!(
                "{} octets of private data: the RDMA CM carries at most {MAX_REP_PRIVATE_DATA} in an accept",
                private_data.len()
            )));
        }
        let deadline = Instant::now() + timeout;
        let channel = Channel::new()?;
        // From here the connection owns the id (and destroys it on error).
        let mut this = std::mem::ManuallyDrop::new(self);
        drop(std::mem::take(&mut this.private_data));
        let mut conn = Connection::new(this.id, channel);
        // SAFETY: live id, live channel: its later events go to the
        // connection's own channel.
        check("rdma_migrate_id", unsafe {
            sys::rdma_migrate_id(conn.id, conn.channel.0)
        })?;
        conn.create_qp(receives)?;
        if receives > 0 {
            conn.post_receives(receives, size)?;
        }
        let mut param = conn_param(private_data, RDMA_MAX_RESOURCES);
        // SAFETY: live id with a QP; param and the private data it points
        // at are valid for the call (librdmacm copies them).
        check("rdma_accept", unsafe {
            sys::rdma_accept(conn.id, &mut param)
        })?;
        conn.channel.expect(
            sys::RDMA_CM_EVENT_ESTABLISHED,
            deadline,
            "the connection to be established",
        )?;
        conn.connected = true;
        Ok(conn)
    }

    /// Reject with `private_data` (empty: none; at most
    /// [`MAX_REJ_PRIVATE_DATA`] octets).
    pub fn reject(self, private_data: &[u8]) -> Result<(), Error> {
        if private_data.len() > MAX_REJ_PRIVATE_DATA {
            // Dropped: rejected without private data.
            return Err(Error::Invalid(format!(
                "{} octets of private data: a reject carries at most {MAX_REJ_PRIVATE_DATA}",
                private_data.len()
            )));
        }
        let mut this = std::mem::ManuallyDrop::new(self);
        drop(std::mem::take(&mut this.private_data));
        let len = private_data.len() as u8;
        // SAFETY: live id with a pending request; the data is valid for
        // the call; the id is destroyed once, here.
        unsafe {
            let data = if len == 0 {
                ptr::null()
            } else {
                private_data.as_ptr().cast()
            };
            let ret = sys::rdma_reject(this.id, data, len);
            let e = errno();
            sys::rdma_destroy_id(this.id);
            if ret != 0 {
                return Err(Error::Call {
                    what: "rdma_reject",
                    errno: e,
                });
            }
        }
        Ok(())
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        // SAFETY: an unanswered request's id is ours: reject, then destroy.
        unsafe {
            sys::rdma_reject(self.id, ptr::null(), 0);
            sys::rdma_destroy_id(self.id);
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Windows first: on rxe a bound window holds the QP, whose
        // destruction would wait for it (Offered::release_window).
        self.remote.iter_mut().for_each(Offered::release_window);
        // SAFETY: each object was created by us and is destroyed once, in
        // dependency order: the windows (above, which reference the QP and
        // the MRs), the QP (which references the CQ, PD and the buffers'
        // MRs), then MRs, CQ, PD and the id. The channel is a later field
        // and is destroyed after.
        unsafe {
            if self.connected {
                sys::rdma_disconnect(self.id);
            }
            if !(*self.id).qp.is_null() {
                sys::rdma_destroy_qp(self.id);
            }
            self.recv.clear();
            self.remote.clear();
            self.send = None;
            if !self.cq.is_null() {
                sys::ibv_destroy_cq(self.cq);
            }
            if !self.pd.is_null() {
                sys::ibv_dealloc_pd(self.pd);
            }
            sys::rdma_destroy_id(self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddr_layout() {
        let ss = sockaddr("192.0.2.1:20049".parse().unwrap());
        // SAFETY: test only: read back what sockaddr() wrote.
        let sin: sys::sockaddr_in =
            unsafe { ptr::read((&ss as *const sys::sockaddr_storage).cast()) };
        assert_eq!(sin.sin_family, AF_INET);
        assert_eq!(u16::from_be(sin.sin_port), 20049);
        assert_eq!(sin.sin_addr.s_addr.to_ne_bytes(), [192, 0, 2, 1]);
        let ss = sockaddr("[fd00::2]:7".parse().unwrap());
        // SAFETY: as above.
        let sin6: sys::sockaddr_in6 =
            unsafe { ptr::read((&ss as *const sys::sockaddr_storage).cast()) };
        assert_eq!(sin6.sin6_family, AF_INET6);
        assert_eq!(u16::from_be(sin6.sin6_port), 7);
        // SAFETY: as above; the union's octet view.
        assert_eq!(unsafe { sin6.sin6_addr.__in6_u.__u6_addr8 }[0], 0xfd);
        // Flow information and scope go through unchanged, as std's own
        // conversion to sockaddr_in6 does (flowinfo() is not host order to
        // be swapped: std copies sin6_flowinfo both ways as is).
        let a = std::net::SocketAddrV6::new("fe80::1".parse().unwrap(), 7, 0x0001_2345, 3);
        let ss = sockaddr(SocketAddr::V6(a));
        // SAFETY: as above.
        let sin6: sys::sockaddr_in6 =
            unsafe { ptr::read((&ss as *const sys::sockaddr_storage).cast()) };
        assert_eq!(sin6.sin6_flowinfo, 0x0001_2345);
        assert_eq!(sin6.sin6_scope_id, 3);
    }

    #[test]
    fn names_of_events_and_statuses() {
        assert_eq!(
            event_name(sys::RDMA_CM_EVENT_ESTABLISHED),
            "RDMA_CM_EVENT_ESTABLISHED"
        );
        assert_eq!(wc_status_name(sys::IBV_WC_SUCCESS), "success");
    }

    /// A fake provider for the send/receive path: a context whose ops
    /// table posts nothing and completes what `FAKE_WC` holds, a QP, a CQ
    /// and an id wired to it. No librdmacm or libibverbs object exists, so
    /// the connection must never be dropped (its Drop would destroy them).
    mod fake {
        use super::*;
        use std::cell::RefCell;
        use std::mem::ManuallyDrop;

        thread_local! {
            /// Completions the fake CQ hands out, first first.
            pub static FAKE_WC: RefCell<std::collections::VecDeque<(u64, sys::ibv_wc_status)>> =
                RefCell::default();
            /// Sends posted to the fake QP.
            pub static POSTED: RefCell<u32> = const { RefCell::new(0) };
        }

        /// Completes the next queued completion, if any.
        unsafe extern "C" fn poll_cq(_: *mut sys::ibv_cq, _: i32, wc: *mut sys::ibv_wc) -> i32 {
            FAKE_WC.with(|q| match q.borrow_mut().pop_front() {
                Some((wr_id, status)) => {
                    // SAFETY: the caller passes room for one completion.
                    unsafe {
                        (*wc).wr_id = wr_id;
                        (*wc).status = status;
                    }
                    1
                }
                None => 0,
            })
        }

        /// Accepts any send.
        unsafe extern "C" fn post_send(
            _: *mut sys::ibv_qp,
            _: *mut sys::ibv_send_wr,
            _: *mut *mut sys::ibv_send_wr,
        ) -> i32 {
            POSTED.with(|p| *p.borrow_mut() += 1);
            0
        }

        /// A connection over the fake provider with a send buffer of
        /// `send_len` octets already allocated.
        pub fn connection(send_len: usize) -> ManuallyDrop<Connection> {
            // SAFETY: test only: plain old data, all zeros is valid; the
            // objects are leaked so the pointers stay valid.
            unsafe {
                let ctx: &mut sys::ibv_context = Box::leak(Box::new(std::mem::zeroed()));
                ctx.ops.poll_cq = Some(poll_cq);
                ctx.ops.post_send = Some(post_send);
                let cq: &mut sys::ibv_cq = Box::leak(Box::new(std::mem::zeroed()));
                cq.context = ctx;
                let qp: &mut sys::ibv_qp = Box::leak(Box::new(std::mem::zeroed()));
                qp.context = ctx;
                let id: &mut sys::rdma_cm_id = Box::leak(Box::new(std::mem::zeroed()));
                id.qp = qp;
                let mr: &mut sys::ibv_mr = Box::leak(Box::new(std::mem::zeroed()));
                // A negative fd: poll() ignores it, so the channel is quiet.
                let ch = Box::leak(Box::new(sys::rdma_event_channel { fd: -1 }));
                ManuallyDrop::new(Connection {
                    recv: Vec::new(),
                    send: Some(Buffer {
                        mem: vec![0; send_len].into_boxed_slice(),
                        mr,
                    }),
                    send_busy: false,
                    received: Default::default(),
                    remote: Vec::new(),
                    windows: Some(false),
                    pd: ptr::null_mut(),
                    cq,
                    id,
                    connected: true,
                    disconnected: false,
                    channel: Channel(ch),
                })
            }
        }
    }

    #[test]
    fn with_invalidate_as_libibverbs_and_as_rxe_report_it() {
        let wc = |flags: u32, rkey: u32| {
            // SAFETY: test only: plain old data, zeros are valid.
            let mut wc: sys::ibv_wc = unsafe { std::mem::zeroed() };
            wc.wc_flags = flags;
            wc.__bindgen_anon_1.invalidated_rkey = rkey;
            wc
        };
        assert_eq!(
            invalidated_rkey(&wc(sys::IBV_WC_WITH_INV, 0x1234)),
            Some(0x1234)
        );
        // rxe: the kernel's IB_WC_WITH_INVALIDATE (bit 2), with IB_WC_GRH.
        assert_eq!(invalidated_rkey(&wc(1 | 4, 0x800_0593)), Some(0x800_0593));
        // A plain Send: rxe zeroes the union.
        assert_eq!(invalidated_rkey(&wc(1, 0)), None);
        assert_eq!(invalidated_rkey(&wc(1 | 4, 0)), None);
        // With immediate data the union is that data.
        assert_eq!(invalidated_rkey(&wc(1 | 2 | 4, 0x1234)), None);
        assert_eq!(invalidated_rkey(&wc(0, 0x1234)), None);
    }

    #[test]
    fn a_message_larger_than_the_send_buffer_is_an_error_not_a_panic() {
        // The buffer was sized by an earlier send's max_send of 8; a later
        // call allows 16 and sends 16.
        let mut conn = fake::connection(8);
        let deadline = Instant::now() + Duration::from_secs(1);
        conn.send(&[1; 8], 8, deadline).unwrap();
        fake::FAKE_WC.with(|q| q.borrow_mut().push_back((u64::MAX, sys::IBV_WC_SUCCESS)));
        let e = conn.send(&[2; 16], 16, deadline).unwrap_err();
        assert!(matches!(e, Error::Invalid(_)), "{e}");
        // The connection is still usable for messages that fit.
        conn.send(&[3; 8], 16, deadline).unwrap();
    }

    #[test]
    fn a_failed_send_completion_does_not_block_later_sends() {
        let mut conn = fake::connection(8);
        let deadline = Instant::now() + Duration::from_secs(1);
        conn.send(&[1; 8], 8, deadline).unwrap();
        fake::FAKE_WC.with(|q| {
            q.borrow_mut()
                .push_back((u64::MAX, sys::IBV_WC_RETRY_EXC_ERR))
        });
        // The next send waits for the completion and reports its failure.
        let e = conn.send(&[2; 8], 8, deadline).unwrap_err();
        assert!(matches!(e, Error::Completion { what: "send", .. }), "{e}");
        // After that the send is no longer outstanding: a further send is
        // posted at once instead of waiting for a completion that will not
        // come until the deadline.
        let start = Instant::now();
        let r = conn.send(&[3; 8], 8, Instant::now() + Duration::from_millis(300));
        assert_eq!(r, Ok(()));
        assert!(start.elapsed() < Duration::from_millis(200));
    }

    #[test]
    fn oversized_private_data_is_refused_before_any_call() {
        let opts = ConnectOptions {
            private_data: Some(vec![0; 57]),
            timeout: Duration::from_millis(10),
            max_recv: 1,
        };
        let e = Connection::connect("127.0.0.1:20049".parse().unwrap(), &opts).unwrap_err();
        assert!(matches!(e, Error::Invalid(_)), "{e}");
    }
}
