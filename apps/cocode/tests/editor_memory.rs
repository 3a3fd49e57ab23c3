//! Opening a big file for the editor holds at most 1.5× its size in memory
//! at the peak: the file is read in pieces straight into the rope, never
//! whole into a buffer beside it (that peaked at 2.13×). Measured with
//! dhat's heap statistics around exactly the window's open path.
#![expect(
    clippy::disallowed_methods,
    reason = "the test writes the file it opens"
)]

use std::io::Write as _;

use cocode::window::io_worker::{Opened, open_file};
use cocode_editor::Document;

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

#[test]
fn opening_a_40_mb_log_peaks_below_one_and_a_half_times_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let path = root.join("big.log");
    let mut size = 0usize;
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut n = 0usize;
        while size < 40 * 1000 * 1000 {
            let line = format!("INFO request {n} served — 요청 처리 완료\n");
            file.write_all(line.as_bytes()).unwrap();
            size += line.len();
            n += 1;
        }
    }
    // dhat counts the heap from here: its peak is this open's peak.
    let _profiler = dhat::Profiler::builder().testing().build();
    let Ok(Opened::Text { rope, .. }) = open_file(&root, &path) else {
        panic!("the log opens as text");
    };
    let doc = Document::from_rope(rope);
    let stats = dhat::HeapStats::get();
    let (peak, kept) = (stats.max_bytes, stats.curr_bytes);
    assert_eq!(doc.rope().len_bytes(), size);
    #[expect(clippy::cast_precision_loss, reason = "a ratio of sizes")]
    let (peak_ratio, kept_ratio) = (peak as f64 / size as f64, kept as f64 / size as f64);
    assert!(peak_ratio <= 1.5, "peak {peak_ratio:.2}× the file size");
    // What stays is the rope.
    assert!(kept_ratio <= 1.3, "kept {kept_ratio:.2}× the file size");
    eprintln!("peak {peak_ratio:.2}×, kept {kept_ratio:.2}× of {size} bytes");
}
