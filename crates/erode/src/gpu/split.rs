//! Field groups split across bindings. A model keeps several per-cell `f32` fields of one kind
//! together (the grid's eight pipe fluxes, its nine books): in one buffer while the group fits
//! the device's largest storage binding, else in as few buffers as hold whole fields each, so a
//! 16384² grid (1 GiB a field) binds on a device whose bindings stop at 2 GiB.
//!
//! A shader declares a group with one line, `#fields NAME BINDING ACCESS` (ACCESS `read` or
//! `read_write`), and reaches it only through `NAME_get(field, cell)` and, when writable,
//! `NAME_set(field, cell, value)` and `NAME_add(field, cell, value)`. [`FieldSplit::expand`]
//! writes the declarations and accessors for the split at hand: buffer `c` of the group
//! declared at binding `b` is bound at `b + 16·c` ([`BINDING_STRIDE`]), so a shader's own
//! bindings stay below 16.

use super::{GpuContext, GpuError};

/// Buffer `c` of a group declared at binding `b` binds at `b + BINDING_STRIDE·c`.
pub const BINDING_STRIDE: u32 = 16;

/// How a model's field groups are split for one grid on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSplit {
    /// Cells per field.
    pub cells: usize,
    /// Whole fields one buffer holds.
    pub fields_per_buffer: usize,
}

impl FieldSplit {
    /// The split for fields of `cells` cells on a device whose storage bindings (and buffers)
    /// hold at most `limit` bytes; refused when one field alone exceeds it.
    pub fn new(cells: usize, limit: u64, adapter: &str) -> Result<Self, GpuError> {
        // shaders index a buffer with u32
        let limit = limit.min(u64::from(u32::MAX));
        let field = cells as u64 * 4;
        let fields_per_buffer = (limit / field.max(1)) as usize;
        if fields_per_buffer == 0 {
            return Err(GpuError::TooLarge {
                what: "field (one f32 per cell)",
                bytes: field,
                limit,
                adapter: adapter.to_string(),
            });
        }
        Ok(Self { cells, fields_per_buffer })
    }

    /// The split `ctx`'s device needs for fields of `cells` cells.
    pub fn for_device(ctx: &GpuContext, cells: usize) -> Result<Self, GpuError> {
        Self::new(cells, ctx.binding_limit(), &ctx.adapter.name)
    }

    /// How many buffers a group of `fields` fields takes.
    pub fn buffers(&self, fields: usize) -> usize {
        fields.div_ceil(self.fields_per_buffer).max(1)
    }

    /// Buffers holding `data` (`fields` fields of `cells` each, field-major), readable back.
    pub fn upload(&self, ctx: &GpuContext, label: &str, data: &[f32]) -> Vec<wgpu::Buffer> {
        let fields = data.len().div_ceil(self.cells.max(1)).max(1);
        let per = self.fields_per_buffer * self.cells;
        (0..self.buffers(fields))
            .map(|c| {
                ctx.storage(&format!("{label}[{c}]"), &data[(c * per).min(data.len())..((c + 1) * per).min(data.len())])
            })
            .collect()
    }

    /// Writes `data` (field-major, from field 0) into the group's buffers.
    pub fn write(&self, ctx: &GpuContext, buffers: &[wgpu::Buffer], data: &[f32]) {
        let per = self.fields_per_buffer * self.cells;
        for (buffer, part) in buffers.iter().zip(data.chunks(per.max(1))) {
            ctx.queue.write_buffer(buffer, 0, bytemuck::cast_slice(part));
        }
    }

    /// Reads the group's buffers back, field-major, waiting for the GPU.
    pub fn read(&self, ctx: &GpuContext, buffers: &[wgpu::Buffer]) -> Result<Vec<f32>, GpuError> {
        let mut out = Vec::new();
        for buffer in buffers {
            out.extend(ctx.read(buffer)?);
        }
        Ok(out)
    }

    /// The byte range `(buffer, offset, size)` of field `f` in a group's `buffers`.
    pub fn field_range<'a>(
        &self,
        buffers: &'a [wgpu::Buffer],
        f: usize,
    ) -> Result<(&'a wgpu::Buffer, u64, u64), GpuError> {
        let per = self.fields_per_buffer.max(1);
        let buffer = buffers.get(f / per).ok_or_else(|| GpuError::Readback(format!("no field {f} in the group")))?;
        let bytes = 4 * self.cells as u64;
        Ok((buffer, (f % per) as u64 * bytes, bytes))
    }

    /// Field `f` of a group's `buffers`, read back alone.
    pub fn read_field(&self, ctx: &GpuContext, buffers: &[wgpu::Buffer], f: usize) -> Result<Vec<f32>, GpuError> {
        let (buffer, offset, size) = self.field_range(buffers, f)?;
        ctx.read_range(buffer, offset, size)
    }

    /// `template` with each `#fields NAME BINDING ACCESS` line replaced by the group's
    /// declarations and accessors; `groups` gives each group's field count. A malformed
    /// directive, or one naming a group `groups` lacks, is a validation error (a bug: shaders are
    /// part of the program).
    pub fn expand(&self, template: &str, groups: &[(&str, usize)]) -> Result<String, GpuError> {
        let bad = |message: String| GpuError::Validation { stage: "#fields", message };
        let mut out = String::with_capacity(template.len() + 1024);
        for line in template.lines() {
            let Some(rest) = line.trim().strip_prefix("#fields ") else {
                out.push_str(line);
                out.push('\n');
                continue;
            };
            let words: Vec<&str> = rest.split_whitespace().collect();
            let [name, binding, access] = words[..] else { return Err(bad(format!("malformed: {line}"))) };
            let binding: u32 = binding.parse().map_err(|_| bad(format!("bad binding: {line}")))?;
            let writable = match access {
                "read" => false,
                "read_write" => true,
                _ => return Err(bad(format!("access must be read or read_write: {line}"))),
            };
            let Some(&(_, fields)) = groups.iter().find(|(n, _)| *n == name) else {
                return Err(bad(format!("no size given for group {name}")));
            };
            out.push_str(&self.declare(name, binding, access, writable, fields));
        }
        Ok(out)
    }

    fn declare(&self, name: &str, binding: u32, access: &str, writable: bool, fields: usize) -> String {
        use std::fmt::Write;
        let (n, per, buffers) = (self.cells, self.fields_per_buffer, self.buffers(fields));
        let mut s = String::new();
        for c in 0..buffers {
            let b = binding + BINDING_STRIDE * c as u32;
            let _ = writeln!(s, "@group(0) @binding({b}) var<storage, {access}> {name}_{c}: array<f32>;");
        }
        // which buffer holds the field, and where in it the cell is
        let body = |op: &str| -> String {
            if buffers == 1 {
                return format!(
                    "    {}\n",
                    op.replace("BUF", &format!("{name}_0")).replace("AT", &format!("f * {n}u + i"))
                );
            }
            let mut b = format!("    let c = f / {per}u;\n    let k = (f - c * {per}u) * {n}u + i;\n    switch c {{\n");
            for c in 0..buffers {
                let label = if c + 1 == buffers { "default".to_string() } else { format!("case {c}u") };
                let _ = writeln!(
                    b,
                    "        {label}: {{ {} }}",
                    op.replace("BUF", &format!("{name}_{c}")).replace("AT", "k")
                );
            }
            b.push_str("    }\n");
            b
        };
        let _ = write!(
            s,
            "fn {name}_get(f: u32, i: u32) -> f32 {{\n    var v = 0.0;\n{}    return v;\n}}\n",
            body("v = BUF[AT];")
        );
        if writable {
            let _ = write!(s, "fn {name}_set(f: u32, i: u32, v: f32) {{\n{}}}\n", body("BUF[AT] = v;"));
            let _ = write!(s, "fn {name}_add(f: u32, i: u32, v: f32) {{\n{}}}\n", body("BUF[AT] += v;"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_split_into_whole_fields_per_buffer() {
        // 1 GiB fields on a device that binds 2 GiB − 4 bytes: one field a buffer
        let s = FieldSplit::new(16384 * 16384, (2u64 << 30) - 4, "test").unwrap();
        assert_eq!((s.fields_per_buffer, s.buffers(8), s.buffers(9)), (1, 8, 9));
        let s = FieldSplit::new(4096 * 4096, 128 << 20, "test").unwrap();
        assert_eq!((s.fields_per_buffer, s.buffers(8), s.buffers(9), s.buffers(1)), (2, 4, 5, 1));
        let err = FieldSplit::new(32768 * 32768, (2u64 << 30) - 4, "big GPU").unwrap_err().to_string();
        assert!(err.contains("4294967296 bytes") && err.contains("big GPU"), "{err}");
    }

    #[test]
    fn the_directive_becomes_declarations_and_accessors() {
        let one = FieldSplit { cells: 10, fields_per_buffer: 9 };
        let src = one.expand("#fields books 4 read_write\nfn x() {}\n", &[("books", 9)]).unwrap();
        assert!(src.contains("@binding(4) var<storage, read_write> books_0"), "{src}");
        assert!(src.contains("books_0[f * 10u + i]") && src.contains("fn books_add") && src.contains("fn x() {}"));
        let split = FieldSplit { cells: 10, fields_per_buffer: 2 };
        let src = split.expand("#fields flux 2 read\n", &[("flux", 8)]).unwrap();
        assert!(split.expand("#fields flux 2 write\n", &[("flux", 8)]).is_err());
        assert!(split.expand("#fields flux 2 read\n", &[("books", 8)]).is_err());
        assert!(src.contains("@binding(50) var<storage, read> flux_3"), "{src}");
        assert!(!src.contains("flux_4") && !src.contains("fn flux_set"), "{src}");
    }
}
