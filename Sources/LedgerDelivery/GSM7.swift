/// The GSM 03.38 alphabet an SMS is counted in: a text made only of its characters goes as
/// 7-bit septets, 160 to one segment (153 to each part of a longer one); any other character
/// turns the whole text into UCS-2, 70 to a segment (67). A code that costs two segments costs
/// twice, and some carriers deliver the parts late or out of order, so the built-in texts keep
/// to one (`MessageTemplates`; tested in `TemplateSMSLengthTests`).
public enum GSM7 {
    /// The characters of the basic table: one septet each.
    static let basic: Set<Unicode.Scalar> = Set(
        "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
            .unicodeScalars)
    /// The characters of the extension table: an escape and a septet each.
    static let extended: Set<Unicode.Scalar> = Set("\u{0C}^{}\\[~]|€".unicodeScalars)

    /// How many characters an SMS counts in `text` (the extension table's count twice); nil
    /// when a character is outside GSM-7 and the text would go as UCS-2.
    public static func length(_ text: String) -> Int? {
        var septets = 0
        // By scalar: "\r\n" is one Character but two septets.
        for character in text.unicodeScalars {
            if basic.contains(character) {
                septets += 1
            } else if extended.contains(character) {
                septets += 2
            } else {
                return nil
            }
        }
        return septets
    }

    /// How many segments `text` takes: GSM-7 when it can, else UCS-2 (counted in UTF-16 units).
    public static func segments(_ text: String) -> Int {
        if let septets = length(text) { return septets <= 160 ? 1 : (septets + 152) / 153 }
        let units = text.utf16.count
        return units <= 70 ? 1 : (units + 66) / 67
    }
}
