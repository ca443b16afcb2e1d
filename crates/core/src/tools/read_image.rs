//! Read of an image (PNG, JPEG, GIF, WebP): the model sees the picture, as in Claude Code. A large one is scaled
//! down to fit the providers' limits (Anthropic refuses images over 8000 pixels a side and requests over 5 MB of
//! image data, and scales anything over about 1568 pixels itself), and the text result says what was sent.

use std::io::Cursor;

use base64::Engine as _;
use image::{DynamicImage, ImageFormat, ImageReader};
use serde_json::{Value, json};

/// The longest side sent; larger images are scaled down to it (the provider would scale them anyway).
const MAX_SIDE: u32 = 2000;
/// The most image data sent for one image, before base64 (Anthropic's limit is 5 MB of base64).
const MAX_BYTES: usize = 3_750_000;
/// The largest file decoded: a picture bigger than this on disk is not one to send.
pub(super) const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;
/// The most pixels decoded (a 100 MP camera picture fits): a small file can declare a huge picture, and decoding
/// it (then scaling it) would take gigabytes.
const MAX_PIXELS: u64 = 100_000_000;
/// The most memory one decode may take.
const MAX_DECODE_BYTES: u64 = 512 * 1024 * 1024;
/// One image is decoded at a time: a reply with many Reads of large pictures must not need their memory at once.
static DECODING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The kind of image `head` (a file's first bytes) starts like, if any tandem sends.
pub(super) fn format_of(head: &[u8]) -> Option<ImageFormat> {
    match head {
        [0x89, b'P', b'N', b'G', ..] => Some(ImageFormat::Png),
        [0xFF, 0xD8, 0xFF, ..] => Some(ImageFormat::Jpeg),
        [b'G', b'I', b'F', b'8', ..] => Some(ImageFormat::Gif),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some(ImageFormat::WebP),
        _ => None,
    }
}

/// An image as it is sent: the text result, the Anthropic image source, and Claude Code's structured result.
pub(super) struct SentImage {
    pub(super) text: String,
    pub(super) source: Value,
    pub(super) structured: Value,
}

/// The image in `bytes` (of `format`), scaled down if it must be. `shown` names the file in messages.
pub(super) fn prepare(bytes: Vec<u8>, format: ImageFormat, shown: &str) -> Result<SentImage, String> {
    let original_size = bytes.len();
    let reader = ImageReader::with_format(Cursor::new(&bytes), format);
    let (width, height) = reader.into_dimensions().map_err(|err| format!("Cannot read the image {shown}: {err}"))?;
    let fits = width <= MAX_SIDE && height <= MAX_SIDE && bytes.len() <= MAX_BYTES;
    let (data, media, sent) = if fits {
        (bytes, mime(format), (width, height))
    } else {
        if u64::from(width) * u64::from(height) > MAX_PIXELS {
            return Err(format!(
                "Cannot read the image {shown}: it is {width}×{height} pixels, more than tandem decodes ({} million \
                 at most). Scale it down first (e.g. with ImageMagick: convert in.png -resize 2000x2000 out.png).",
                MAX_PIXELS / 1_000_000
            ));
        }
        let _one_at_a_time = DECODING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut reader = ImageReader::with_format(Cursor::new(&bytes), format);
        let mut limits = image::Limits::default();
        limits.max_alloc = Some(MAX_DECODE_BYTES);
        reader.limits(limits);
        let image = reader.decode().map_err(|err| format!("Cannot read the image {shown}: {err}"))?;
        shrink(image, format).map_err(|err| format!("Cannot scale the image {shown} down: {err}"))?
    };
    let scaled = sent != (width, height);
    let text = match scaled {
        false => format!("Image {shown}: {width}×{height} pixels, {} (shown below).", human(original_size)),
        true => format!(
            "Image {shown}: {width}×{height} pixels, {}; scaled down to {}×{} to be sent (shown below).",
            human(original_size),
            sent.0,
            sent.1
        ),
    };
    let data = base64::engine::general_purpose::STANDARD.encode(&data);
    let source = json!({"type": "base64", "media_type": media, "data": data});
    let structured = json!({
        "type": "image",
        "file": {
            "base64": data,
            "type": media,
            "originalSize": original_size,
            "dimensions": {
                "originalWidth": width,
                "originalHeight": height,
                "displayWidth": sent.0,
                "displayHeight": sent.1,
            },
        },
    });
    Ok(SentImage { text, source, structured })
}

/// Encoded image data, its media type and its size in pixels.
type Encoded = (Vec<u8>, &'static str, (u32, u32));

/// The image within [`MAX_SIDE`] and [`MAX_BYTES`]: in its own format when that is small enough (PNG keeps
/// transparency and sharp text), else as JPEG, smaller each time until it fits.
fn shrink(image: DynamicImage, format: ImageFormat) -> Result<Encoded, String> {
    let mut image = fit(image, MAX_SIDE);
    if matches!(format, ImageFormat::Png | ImageFormat::Jpeg) {
        let bytes = encode(&image, format)?;
        if bytes.len() <= MAX_BYTES {
            return Ok((bytes, mime(format), (image.width(), image.height())));
        }
    }
    loop {
        let bytes = encode(&DynamicImage::ImageRgb8(image.to_rgb8()), ImageFormat::Jpeg)?;
        if bytes.len() <= MAX_BYTES || image.width().max(image.height()) <= 256 {
            return Ok((bytes, mime(ImageFormat::Jpeg), (image.width(), image.height())));
        }
        image = fit(image.clone(), image.width().max(image.height()) * 3 / 4);
    }
}

fn fit(image: DynamicImage, side: u32) -> DynamicImage {
    match image.width() > side || image.height() > side {
        true => image.resize(side, side, image::imageops::FilterType::Triangle),
        false => image,
    }
}

fn encode(image: &DynamicImage, format: ImageFormat) -> Result<Vec<u8>, String> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).map_err(|err| err.to_string())?;
    Ok(out.into_inner())
}

fn mime(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "image/png",
        ImageFormat::Gif => "image/gif",
        ImageFormat::WebP => "image/webp",
        _ => "image/jpeg",
    }
}

fn human(bytes: usize) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x ^ y) % 256) as u8])
        }));
        encode(&image, ImageFormat::Png).unwrap()
    }

    #[test]
    fn a_small_image_is_sent_as_it_is_and_a_large_one_scaled_down() {
        let small = png(40, 30);
        assert_eq!(format_of(&small), Some(ImageFormat::Png));
        let sent = prepare(small.clone(), ImageFormat::Png, "a.png").unwrap();
        assert!(sent.text.contains("40×30 pixels"), "{}", sent.text);
        assert_eq!(sent.source["media_type"], "image/png");
        let data = base64::engine::general_purpose::STANDARD.decode(sent.source["data"].as_str().unwrap()).unwrap();
        assert_eq!(data, small, "sent byte for byte");

        let large = prepare(png(4000, 1000), ImageFormat::Png, "wide.png").unwrap();
        assert!(large.text.contains("scaled down to 2000×500"), "{}", large.text);
        assert_eq!(large.structured["file"]["dimensions"]["displayWidth"], 2000);
    }

    /// Found by the fifty-third red-team round: a 460 KB PNG declaring 11000×11000 took 850 MB to read, and eight
    /// at once 6.5 GB. Such a picture is refused before it is decoded.
    #[test]
    fn a_picture_too_large_to_decode_is_refused_before_decoding() {
        let mut header = png(1, 1);
        header[16..20].copy_from_slice(&11_000u32.to_be_bytes());
        header[20..24].copy_from_slice(&11_000u32.to_be_bytes());
        // The IHDR chunk's CRC (over its type and data), so that the header reads as valid.
        let crc = !header[12..29].iter().fold(!0u32, |crc, &byte| {
            (0..8).fold(crc ^ u32::from(byte), |crc, _| if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 })
        });
        header[29..33].copy_from_slice(&crc.to_be_bytes());
        let error = prepare(header, ImageFormat::Png, "bomb.png").err().unwrap();
        assert!(error.contains("11000×11000 pixels, more than tandem decodes"), "{error}");
    }

    #[test]
    fn a_file_that_only_looks_like_an_image_is_an_error() {
        let error = prepare(b"\x89PNG\r\n\x1a\nnot really".to_vec(), ImageFormat::Png, "fake.png").err().unwrap();
        assert!(error.contains("Cannot read the image fake.png"), "{error}");
        assert_eq!(format_of(b"plain text"), None);
    }
}
