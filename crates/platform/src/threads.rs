//! Spreading work of the processor over the machine's cores.

/// Below this many items work stays on the calling thread.
pub const PARALLEL_ITEMS: usize = 32;

/// `f` of every item, in order, computed on as many threads as there are
/// cores (on the calling thread for fewer than [`PARALLEL_ITEMS`] items or
/// one core). A panic in `f` is carried to the caller.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    // A short list (one file of one operation, the most common) never asks
    // for the core count: the standard library reads the cgroup's files
    // each time it is asked.
    if items.len() < PARALLEL_ITEMS {
        return items.iter().map(f).collect();
    }
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    if threads < 2 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(|| part.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|part| match part.join() {
                Ok(results) => results,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn parallel_map_keeps_the_order_of_its_items() {
        let items: Vec<u32> = (0..500).collect();
        let doubled = parallel_map(&items, |i| i * 2);
        assert_eq!(doubled, (0..500).map(|i| i * 2).collect::<Vec<_>>());
        let few: Vec<u32> = (0..5).collect();
        assert_eq!(parallel_map(&few, |i| i + 1), vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_panic_in_a_worker_reaches_the_caller() {
        let items: Vec<u32> = (0..500).collect();
        let caught = std::panic::catch_unwind(|| {
            parallel_map(&items, |i| assert!(*i != 400, "item 400"));
        });
        assert!(caught.is_err());
    }
}
