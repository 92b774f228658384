// SPDX-License-Identifier: GPL-2.0

//! tools/wireshark/rpcrdma_cm.lua under tshark on
//! tools/wireshark/testdata/cm_private.pcap: a ConnectRequest and
//! ConnectReply of an NFS/RDMA mount between two guests (stock Linux), and
//! copies with other private data, another service port or an unknown
//! communication ID (see make_fixture.py there). tshark is installed by
//! scripts/deps.sh; without it this test fails.

use std::path::Path;
use std::process::Command;

#[test]
fn fields_of_every_frame() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("wireshark");
    let out = Command::new("tshark")
        .arg("-X")
        .arg(format!(
            "lua_script:{}",
            dir.join("rpcrdma_cm.lua").display()
        ))
        .arg("-r")
        .arg(dir.join("testdata/cm_private.pcap"))
        .args(["-T", "fields", "-E", "separator=|"])
        .args(["-e", "frame.number", "-e", "rpcrdma_cm.conformance"])
        .args(["-e", "rpcrdma_cm.max_send", "-e", "rpcrdma_cm.max_recv"])
        .args(["-e", "rpcrdma_cm.ri", "-e", "rpcrdma_cm.reserved"])
        .args(["-e", "rpcrdma_cm.version", "-e", "rpcrdma_cm.magic"])
        .args(["-e", "_ws.expert.severity"])
        .output()
        .expect("tshark (scripts/deps.sh installs it)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("Lua: Error"), "{stderr}");
    // Expert severity 6291456 is a warning, 4194304 a note.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
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
