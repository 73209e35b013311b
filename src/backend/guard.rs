//! Guard zones: a kernel's buffer inside a larger allocation, with canary
//! values before and after it, checked after a checked run, so that a write
//! outside the buffer is seen and named ("wrote buffer `y` 1 element past its
//! end"). Built on views ([`Backend::view`]), so every toolchain has them.

use super::{Backend, Buffer, Elem, HostDataMut, VIEW_ALIGN_BYTES};
use crate::error::Result;
use crate::util::words::plural;

/// The size of each guard zone: one view alignment.
pub const GUARD_BYTES: usize = VIEW_ALIGN_BYTES;

/// What a guard zone holds: a value no kernel computes by chance (finite, so
/// that a NaN written there is a change too).
pub fn canary(elem: Elem) -> f64 {
    if elem.is_float() {
        -9.5e29
    } else {
        1_515_870_810.0 // 0x5A5A5A5A
    }
}

/// A buffer with a guard zone of [`GUARD_BYTES`] before it and at least as many
/// after it; kernels take `view`.
pub struct Guarded {
    parent: Buffer,
    pub view: Buffer,
}

/// `buf`'s elements as bits, to compare with the canary's.
fn download_bits(be: &mut impl Backend, buf: &Buffer) -> Result<Vec<u64>> {
    let n = buf.len;
    Ok(match buf.elem {
        Elem::F32 => {
            let mut v = vec![0f32; n];
            be.download(buf, HostDataMut::F32(&mut v))?;
            v.iter().map(|x| u64::from(x.to_bits())).collect()
        }
        Elem::F64 => {
            let mut v = vec![0f64; n];
            be.download(buf, HostDataMut::F64(&mut v))?;
            v.iter().map(|x| x.to_bits()).collect()
        }
        Elem::I32 => {
            let mut v = vec![0i32; n];
            be.download(buf, HostDataMut::I32(&mut v))?;
            v.iter().map(|&x| u64::from(x as u32)).collect()
        }
        Elem::U32 => {
            let mut v = vec![0u32; n];
            be.download(buf, HostDataMut::U32(&mut v))?;
            v.iter().map(|&x| u64::from(x)).collect()
        }
    })
}

/// The canary's bits as `download_bits` gives them.
fn canary_bits(elem: Elem) -> u64 {
    let v = canary(elem);
    match elem {
        Elem::F32 => u64::from((v as f32).to_bits()),
        Elem::F64 => v.to_bits(),
        Elem::I32 => u64::from(v as i32 as u32),
        Elem::U32 => u64::from(v as u32),
    }
}

impl Guarded {
    /// Elements of a guard zone for `elem`.
    pub fn lead(elem: Elem) -> usize {
        GUARD_BYTES / elem.size()
    }

    /// `n` elements of `elem` with a guard zone on each side, the zones filled
    /// with the canary (the buffer itself too, until its owner fills it).
    pub fn new(be: &mut impl Backend, elem: Elem, n: usize) -> Result<Guarded> {
        let lead = Self::lead(elem);
        let parent = be.alloc(elem, lead + n.max(1) + lead)?;
        let made = be
            .fill(&parent, canary(elem))
            .and_then(|_| be.view(&parent, lead, n.max(1)));
        match made {
            Ok(view) => Ok(Guarded { parent, view }),
            Err(e) => {
                be.free(parent);
                Err(e)
            }
        }
    }

    /// A view of the buffer's first element (a view of a view is not to be made).
    pub fn head(&self, be: &mut impl Backend) -> Result<Buffer> {
        be.view(&self.parent, Self::lead(self.parent.elem), 1)
    }

    /// What the kernel changed outside its buffer, in words; None where both
    /// guard zones hold their canary.
    pub fn breach(&self, be: &mut impl Backend, name: &str) -> Result<Option<String>> {
        let elem = self.parent.elem;
        let (lead, n) = (Self::lead(elem), self.view.len);
        let want = canary_bits(elem);
        let changed = |bits: &[u64], from: usize| -> Vec<usize> {
            (from..bits.len()).filter(|&i| bits[i] != want).collect()
        };
        // Before: the whole leading zone (its view starts at the allocation).
        let before = be.view(&self.parent, 0, lead)?;
        let got = download_bits(be, &before);
        be.free(before);
        let before: Vec<usize> = changed(&got?, 0);
        // After: from the last aligned start at or before the buffer's end.
        let start = (lead + n) / lead * lead;
        let after = be.view(&self.parent, start, self.parent.len - start)?;
        let got = download_bits(be, &after);
        be.free(after);
        let after: Vec<usize> = changed(&got?, lead + n - start);
        let mut said = Vec::new();
        if let Some(&first) = after.first() {
            let past = start + first - (lead + n) + 1;
            said.push(format!(
                "kernel wrote buffer `{name}` {} past its end (index {}; it holds {n}, 0 to {}; {} of the {} guard elements after it changed)",
                plural(past, "element"),
                n + past - 1,
                n.saturating_sub(1),
                after.len(),
                self.parent.len - lead - n
            ));
        }
        if let Some(&last) = before.last() {
            said.push(format!(
                "kernel wrote buffer `{name}` {} before its start (index -{}; it holds {n}, 0 to {}; {} of the {lead} guard elements before it changed)",
                plural(lead - last, "element"),
                lead - last,
                n.saturating_sub(1),
                before.len()
            ));
        }
        Ok((!said.is_empty()).then(|| said.join("; ")))
    }

    /// The view and its allocation, to be freed in this order.
    pub fn into_buffers(self) -> [Buffer; 2] {
        [self.view, self.parent]
    }

    pub fn release(self, be: &mut impl Backend) {
        be.free(self.view);
        be.free(self.parent);
    }
}
