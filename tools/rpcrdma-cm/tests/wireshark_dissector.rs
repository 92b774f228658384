// SPDX-License-Identifier: GPL-2.0

//! tools/wireshark/rpcrdma_cm.lua under tshark on two captures in
//! tools/wireshark/testdata (see make_fixture.py there): cm_private.pcap,
//! a ConnectRequest and ConnectReply of an NFS/RDMA mount between two
//! guests (stock Linux, RoCE v2) and copies with other private data,
//! another service port or an unknown communication ID; mpa.pcap, the MPA
//! exchanges of rpcrdma-cm probing nfsd over siw, and copies. tshark is
//! installed by scripts/kernel/deps.sh; without it these tests fail.

use std::path::Path;
use std::process::Command;

/// The dissector's fields, '|'-separated, one line per frame matching
/// `filter` in the capture `pcap` under tools/wireshark/testdata.
fn dissect(pcap: &str, filter: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wireshark");
    let out = Command::new("tshark")
        .arg("-X")
        .arg(format!(
            "lua_script:{}",
            dir.join("rpcrdma_cm.lua").display()
        ))
        .arg("-r")
        .arg(dir.join("testdata").join(pcap))
        .args(["-Y", filter])
        .args(["-T", "fields", "-E", "separator=|"])
        .args(["-e", "frame.number", "-e", "rpcrdma_cm.conformance"])
        .args(["-e", "rpcrdma_cm.max_send", "-e", "rpcrdma_cm.max_recv"])
        .args(["-e", "rpcrdma_cm.ri", "-e", "rpcrdma_cm.reserved"])
        .args(["-e", "rpcrdma_cm.version", "-e", "rpcrdma_cm.magic"])
        .args(["-e", "_ws.expert.severity"])
        .output()
        .expect("tshark (scripts/kernel/deps.sh installs it)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("Lua: Error"), "{stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// InfiniBand CM (RoCE v2) REQ and REP. Expert severity 6291456 is a
/// warning, 4194304 a note.
#[test]
fn infiniband_cm_req_and_rep() {
    assert_eq!(
        dissect("cm_private.pcap", "frame"),
        "\
1|ok|4096|4096|1|0x00|1|0xf6ab0e18|
2|ok|4096|4096|0|0x00|1|0xf6ab0e18|
3|zeroed||||||0x00000000|6291456
4|bad_magic||||||0x180eabf6|6291456
5|unknown_version|||||2|0xf6ab0e18|6291456
6|ok|16384|16384|1|0x80|1|0xf6ab0e18|4194304
7||||||||
8|zeroed||||||0x00000000|6291456
9||||||||
10|ok|4096|4096|1|0x00|1|0xf6ab0e18|
"
    );
}

/// iWARP (siw) MPA Request and Reply, MPA revision 2: the IRD/ORD octets
/// come first. Port 20050 is not an NFS/RDMA port: claimed only with the
/// format identifier. Frame 54 carries the IRD/ORD octets only.
#[test]
fn iwarp_mpa_request_and_reply() {
    assert_eq!(
        dissect("mpa.pcap", "iwarp_mpa.req || iwarp_mpa.rep"),
        "\
4|ok|4096|4096|1|0x00|1|0xf6ab0e18|
6|ok|4096|4096|1|0x00|1|0xf6ab0e18|
14|ok|16384|16384|1|0x80|1|0xf6ab0e18|4194304
16|ok|4096|4096|1|0x00|1|0xf6ab0e18|
24|zeroed||||||0x00000000|6291456
26|ok|4096|4096|1|0x00|1|0xf6ab0e18|
34||||||||
36||||||||
44|ok|4096|4096|1|0x00|1|0xf6ab0e18|
46|ok|4096|4096|1|0x00|1|0xf6ab0e18|
54|absent|||||||6291456
56|ok|4096|4096|1|0x00|1|0xf6ab0e18|
"
    );
}
