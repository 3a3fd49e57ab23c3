fn main() {
    println!("hello, world");
}
// the end
