//! `cargo xtask icons`: renders `assets/icon/cocode.svg` into every size the
//! platforms ask for — PNGs for the hicolor theme and the window, a `.ico`
//! (Windows) and a `.icns` (macOS), both holding PNGs. The results are
//! committed, so building cocode never needs the renderer.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

/// The PNG sizes written (`assets/icon/png/<size>.png`).
pub const SIZES: [u32; 8] = [16, 24, 32, 48, 64, 128, 256, 512];
/// Sizes in the `.ico`.
const ICO_SIZES: [u32; 6] = [16, 24, 32, 48, 64, 256];
/// `.icns` entry types holding PNGs, by size.
const ICNS_TYPES: [(&[u8; 4], u32); 4] =
    [(b"icp4", 16), (b"icp5", 32), (b"ic07", 128), (b"ic08", 256)];

/// The SVG rendered at `size`×`size`, as a PNG.
pub fn render(svg: &[u8], size: u32) -> Result<Vec<u8>> {
    let tree = resvg::usvg::Tree::from_data(svg, &resvg::usvg::Options::default())
        .context("reading the icon's SVG")?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size, size).context("a pixmap of that size")?;
    let scale = f32::from(u16::try_from(size)?) / tree.size().width();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().context("encoding the PNG")
}

/// A `.ico` holding the given PNGs (`(size, png)`); 256 is written as 0, as
/// the format wants.
pub fn ico(pngs: &[(u32, Vec<u8>)]) -> Result<Vec<u8>> {
    let count = u16::try_from(pngs.len())?;
    let mut out = Vec::new();
    out.extend(0u16.to_le_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend(count.to_le_bytes());
    let mut offset = 6 + 16 * u32::from(count);
    for (size, png) in pngs {
        if *size > 256 {
            bail!("an .ico entry is at most 256 pixels");
        }
        let side = u8::try_from(*size % 256)?;
        out.extend([side, side, 0, 0]);
        out.extend(1u16.to_le_bytes());
        out.extend(32u16.to_le_bytes());
        out.extend(u32::try_from(png.len())?.to_le_bytes());
        out.extend(offset.to_le_bytes());
        offset += u32::try_from(png.len())?;
    }
    for (_, png) in pngs {
        out.extend(png);
    }
    Ok(out)
}

/// An `.icns` holding the given PNGs under their entry types.
pub fn icns(entries: &[(&[u8; 4], Vec<u8>)]) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    for (kind, png) in entries {
        body.extend(*kind);
        body.extend(u32::try_from(png.len() + 8)?.to_be_bytes());
        body.extend(png);
    }
    let mut out = b"icns".to_vec();
    out.extend(u32::try_from(body.len() + 8)?.to_be_bytes());
    out.extend(body);
    Ok(out)
}

/// Renders everything into `assets/icon/`.
pub fn run(root: &Path) -> Result<bool> {
    let dir = root.join("assets/icon");
    let svg = std::fs::read(dir.join("cocode.svg")).context("assets/icon/cocode.svg")?;
    std::fs::create_dir_all(dir.join("png"))?;
    let mut pngs = Vec::new();
    for size in SIZES {
        let png = render(&svg, size)?;
        let path = dir.join("png").join(format!("{size}.png"));
        std::fs::write(&path, &png)?;
        println!("icons: {}", path.display());
        pngs.push((size, png));
    }
    let png_of = |size: u32| {
        pngs.iter()
            .find(|(s, _)| *s == size)
            .map(|(_, p)| p.clone())
            .context("a rendered size")
    };
    let ico_entries = ICO_SIZES
        .iter()
        .map(|s| Ok((*s, png_of(*s)?)))
        .collect::<Result<Vec<_>>>()?;
    std::fs::write(dir.join("cocode.ico"), ico(&ico_entries)?)?;
    let icns_entries = ICNS_TYPES
        .iter()
        .map(|(kind, s)| Ok((*kind, png_of(*s)?)))
        .collect::<Result<Vec<_>>>()?;
    std::fs::write(dir.join("cocode.icns"), icns(&icns_entries)?)?;
    println!("icons: {}", dir.join("cocode.ico").display());
    println!("icons: {}", dir.join("cocode.icns").display());
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

    #[test]
    fn the_svg_renders_at_every_size_and_the_committed_pngs_match_it() {
        let root = crate::repo_root().unwrap();
        let svg = std::fs::read(root.join("assets/icon/cocode.svg")).unwrap();
        for size in SIZES {
            let png = render(&svg, size).unwrap();
            assert!(png.starts_with(PNG_MAGIC));
            let committed =
                std::fs::read(root.join(format!("assets/icon/png/{size}.png"))).unwrap();
            assert_eq!(
                png, committed,
                "assets/icon/png/{size}.png is stale: run cargo xtask icons"
            );
        }
    }

    #[test]
    fn ico_and_icns_containers_index_their_pngs() {
        let a = b"\x89PNG\r\n\x1a\nA".to_vec();
        let b = b"\x89PNG\r\n\x1a\nBB".to_vec();
        let ico = ico(&[(16, a.clone()), (256, b.clone())]).unwrap();
        assert_eq!(&ico[..6], &[0, 0, 1, 0, 2, 0]);
        // Entry 1: 16×16, its size and offset (6 + 2×16 = 38).
        assert_eq!(&ico[6..10], &[16, 16, 0, 0]);
        assert_eq!(u32::from_le_bytes(ico[14..18].try_into().unwrap()), 9);
        assert_eq!(u32::from_le_bytes(ico[18..22].try_into().unwrap()), 38);
        // Entry 2: 256 is written as 0.
        assert_eq!(&ico[22..26], &[0, 0, 0, 0]);
        assert_eq!(u32::from_le_bytes(ico[34..38].try_into().unwrap()), 47);
        assert_eq!(&ico[38..47], a.as_slice());
        assert_eq!(&ico[47..], b.as_slice());
        let icns = icns(&[(b"ic07", a.clone())]).unwrap();
        assert_eq!(&icns[..4], b"icns");
        assert_eq!(
            u32::from_be_bytes(icns[4..8].try_into().unwrap()),
            8 + 8 + 9
        );
        assert_eq!(&icns[8..12], b"ic07");
        assert_eq!(u32::from_be_bytes(icns[12..16].try_into().unwrap()), 17);
        assert_eq!(&icns[16..], a.as_slice());
    }
}
