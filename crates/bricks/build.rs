//! The built-in bricks are compiled in with `include_dir!`, which stable
//! Rust cannot track; this makes any change below `assets/bricks` rebuild
//! the crate.

fn main() {
    println!("cargo:rerun-if-changed=../../assets/bricks");
}
