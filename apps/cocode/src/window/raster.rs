//! A software renderer for the window's image snapshots: egui's
//! tessellated meshes drawn on the CPU, triangle by triangle (textures
//! sampled bilinearly, premultiplied colours blended over), so a snapshot
//! needs no GPU, no graphics driver and no wgpu build, and draws the same
//! pixels on every x86-64 machine. It is not egui's GPU renderer: colours
//! are blended in gamma space and edges are not multisampled, which is
//! what a reference image of the window needs — the same input, the same
//! pixels.

#![expect(
    clippy::many_single_char_names,
    reason = "a rasterizer's geometry: x, y, u, v, w and the like"
)]

use std::collections::HashMap;

use egui::epaint::{ClippedPrimitive, Primitive, Vertex};
use egui::{Color32, TextureId, TexturesDelta};

/// One texture: size and premultiplied pixels.
struct Texture {
    size: [usize; 2],
    pixels: Vec<Color32>,
}

/// The renderer: the textures egui asked for.
#[derive(Default)]
pub struct Raster {
    textures: HashMap<TextureId, Texture>,
}

impl Raster {
    fn apply(&mut self, delta: &TexturesDelta) {
        for (id, deltas) in &delta.set {
            for d in deltas {
                let egui::ImageData::Color(image) = &d.image;
                match d.pos {
                    None => {
                        self.textures.insert(
                            *id,
                            Texture {
                                size: image.size,
                                pixels: image.pixels.clone(),
                            },
                        );
                    }
                    Some([x0, y0]) => {
                        let Some(texture) = self.textures.get_mut(id) else {
                            continue;
                        };
                        let [w, h] = image.size;
                        for y in 0..h {
                            for x in 0..w {
                                let (tx, ty) = (x0 + x, y0 + y);
                                if tx < texture.size[0] && ty < texture.size[1] {
                                    texture.pixels[ty * texture.size[0] + tx] =
                                        image.pixels[y * w + x];
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    fn free(&mut self, delta: &TexturesDelta) {
        for id in &delta.free {
            self.textures.remove(id);
        }
    }

    /// The texel at `uv`, bilinearly filtered, premultiplied, 0–1.
    fn sample(&self, texture: TextureId, u: f32, v: f32) -> [f32; 4] {
        let Some(t) = self.textures.get(&texture) else {
            return [1.0; 4];
        };
        let [w, h] = t.size;
        if w == 0 || h == 0 {
            return [1.0; 4];
        }
        #[expect(clippy::cast_precision_loss, reason = "texture sizes are small")]
        let (x, y) = (u * w as f32 - 0.5, v * h as f32 - 0.5);
        let (fx, fy) = (x.floor(), y.floor());
        let (ax, ay) = (x - fx, y - fy);
        let texel = |dx: f32, dy: f32| {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss,
                reason = "clamped to the texture"
            )]
            let (cx, cy) = (
                (fx + dx).clamp(0.0, (w - 1) as f32) as usize,
                (fy + dy).clamp(0.0, (h - 1) as f32) as usize,
            );
            let c = t.pixels[cy * w + cx];
            [
                f32::from(c.r()) / 255.0,
                f32::from(c.g()) / 255.0,
                f32::from(c.b()) / 255.0,
                f32::from(c.a()) / 255.0,
            ]
        };
        let (a, b, c, d) = (
            texel(0.0, 0.0),
            texel(1.0, 0.0),
            texel(0.0, 1.0),
            texel(1.0, 1.0),
        );
        std::array::from_fn(|i| {
            let top = a[i] + (b[i] - a[i]) * ax;
            let bottom = c[i] + (d[i] - c[i]) * ax;
            top + (bottom - top) * ay
        })
    }

    /// Draws `primitives` on a `width`×`height` image (premultiplied
    /// colours, 0–1), scaled by `ppp`.
    fn draw(
        &self,
        primitives: &[ClippedPrimitive],
        width: usize,
        height: usize,
        ppp: f32,
    ) -> Vec<[f32; 4]> {
        let mut image = vec![[0.0f32; 4]; width * height];
        for ClippedPrimitive {
            clip_rect,
            primitive,
        } in primitives
        {
            let Primitive::Mesh(mesh) = primitive else {
                continue;
            };
            let clip = (
                (clip_rect.min.x * ppp).max(0.0),
                (clip_rect.min.y * ppp).max(0.0),
                #[expect(clippy::cast_precision_loss, reason = "image sizes are small")]
                (clip_rect.max.x * ppp).min(width as f32),
                #[expect(clippy::cast_precision_loss, reason = "image sizes are small")]
                (clip_rect.max.y * ppp).min(height as f32),
            );
            for tri in mesh.indices.chunks_exact(3) {
                let v = |i: u32| mesh.vertices[i as usize];
                self.triangle(
                    &mut image,
                    (width, height),
                    clip,
                    [v(tri[0]), v(tri[1]), v(tri[2])],
                    (mesh.texture_id, ppp),
                );
            }
        }
        image
    }

    /// Fills one triangle: each pixel whose centre lies inside gets the
    /// interpolated colour times the texel, blended over what is there.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "pixel coordinates, clamped to the image"
    )]
    fn triangle(
        &self,
        image: &mut [[f32; 4]],
        (width, _height): (usize, usize),
        (cx0, cy0, cx1, cy1): (f32, f32, f32, f32),
        vertices: [Vertex; 3],
        (texture, ppp): (TextureId, f32),
    ) {
        let p = vertices.map(|v| (v.pos.x * ppp, v.pos.y * ppp));
        let area = (p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (p[1].1 - p[0].1);
        if area.abs() < 1e-12 {
            return;
        }
        let min_x = p.iter().map(|q| q.0).fold(f32::INFINITY, f32::min).max(cx0);
        let max_x = p
            .iter()
            .map(|q| q.0)
            .fold(f32::NEG_INFINITY, f32::max)
            .min(cx1);
        let min_y = p.iter().map(|q| q.1).fold(f32::INFINITY, f32::min).max(cy0);
        let max_y = p
            .iter()
            .map(|q| q.1)
            .fold(f32::NEG_INFINITY, f32::max)
            .min(cy1);
        if min_x >= max_x || min_y >= max_y {
            return;
        }
        let colors = vertices.map(|v| {
            [
                f32::from(v.color.r()) / 255.0,
                f32::from(v.color.g()) / 255.0,
                f32::from(v.color.b()) / 255.0,
                f32::from(v.color.a()) / 255.0,
            ]
        });
        let edge = |a: (f32, f32), b: (f32, f32), x: f32, y: f32| {
            (b.0 - a.0) * (y - a.1) - (b.1 - a.1) * (x - a.0)
        };
        for y in (min_y.floor() as usize)..(max_y.ceil() as usize) {
            let py = y as f32 + 0.5;
            if py < cy0 || py >= cy1 {
                continue;
            }
            for x in (min_x.floor() as usize)..(max_x.ceil() as usize) {
                let px = x as f32 + 0.5;
                if px < cx0 || px >= cx1 {
                    continue;
                }
                let w0 = edge(p[1], p[2], px, py) / area;
                let w1 = edge(p[2], p[0], px, py) / area;
                let w2 = edge(p[0], p[1], px, py) / area;
                if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                    continue;
                }
                let u = w0 * vertices[0].uv.x + w1 * vertices[1].uv.x + w2 * vertices[2].uv.x;
                let v = w0 * vertices[0].uv.y + w1 * vertices[1].uv.y + w2 * vertices[2].uv.y;
                let texel = self.sample(texture, u, v);
                let src: [f32; 4] = std::array::from_fn(|i| {
                    (w0 * colors[0][i] + w1 * colors[1][i] + w2 * colors[2][i]) * texel[i]
                });
                let dst = &mut image[y * width + x];
                for i in 0..4 {
                    dst[i] = src[i] + dst[i] * (1.0 - src[3]);
                }
            }
        }
    }
}

impl egui_kittest::TestRenderer for Raster {
    fn handle_delta(&mut self, delta: &mut TexturesDelta) {
        // Taken: a delta dropped unapplied is a bug egui reports.
        let mut delta = std::mem::take(delta);
        self.apply(&delta);
        self.free(&delta);
        delta.clear();
    }

    fn render(
        &mut self,
        ctx: &egui::Context,
        output: &egui::FullOutput,
    ) -> Result<image::RgbaImage, String> {
        let ppp = ctx.pixels_per_point();
        let size = ctx.content_rect().size() * ppp;
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a window's size in pixels"
        )]
        let (width, height) = (size.x.round() as usize, size.y.round() as usize);
        let primitives = ctx.tessellate(output.shapes.clone(), ppp);
        let drawn = self.draw(&primitives, width, height, ppp);
        let mut bytes = Vec::with_capacity(width * height * 4);
        for [r, g, b, a] in drawn {
            // Premultiplied to straight alpha, as a PNG keeps it.
            let unmul = |c: f32| {
                if a > 0.0 {
                    (c / a).clamp(0.0, 1.0)
                } else {
                    0.0
                }
            };
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "0–1 to a byte"
            )]
            let byte = |c: f32| (c * 255.0).round() as u8;
            bytes.extend([
                byte(unmul(r)),
                byte(unmul(g)),
                byte(unmul(b)),
                byte(a.clamp(0.0, 1.0)),
            ]);
        }
        let width = u32::try_from(width).map_err(|e| e.to_string())?;
        let height = u32::try_from(height).map_err(|e| e.to_string())?;
        image::RgbaImage::from_raw(width, height, bytes)
            .ok_or_else(|| "the image does not fit its size".to_owned())
    }
}
