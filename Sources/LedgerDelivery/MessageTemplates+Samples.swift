import Foundation
import LedgerAccounts

extension MessageTemplates {
    /// The templates the service sends, and by which channels: the notices of a changed sign-in
    /// method or password go by SMS to an account with no verified email.
    public static let catalog: [String: [OutboxMessage.Channel]] = [
        "otp": [.sms],
        "verify_email": [.email], "password_reset": [.email], "reauth_link": [.email], "email_change_confirm": [.email],
        "email_add_confirm": [.email], "email_change_notice": [.email], "email_changed_notice": [.email],
        "email_removed_notice": [.email],
        ImpliedMessages.newSignInTemplate: [.email], ImpliedMessages.twoFactorChangedTemplate: [.email, .sms],
        ImpliedMessages.twoFactorLimitReachedTemplate: [.email],
        ImpliedMessages.methodAddedTemplate: [.email, .sms], ImpliedMessages.methodRemovedTemplate: [.email, .sms],
        ImpliedMessages.passwordChangedTemplate: [.email, .sms], ImpliedMessages.passkeySuspectTemplate: [.email, .sms],
        ImpliedMessages.changedBySupportTemplate: [.email, .sms], StaffConsole.invitationTemplate: [.email],
    ]

    /// A message of `template` as the service would send it, with sample values (the code
    /// 482915, a link with a made-up token, an iPhone, `now`): what `ledger templates preview`
    /// renders. Unknown templates get every sample field.
    public static func sample(
        _ template: String, channel: OutboxMessage.Channel = .email, locale: String = "en", now: Date = Date(),
        linkBase: String = "https://321.fit"
    ) -> OutboxMessage {
        let stamp = { (date: Date) in
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.string(from: date)
        }
        let token = "sample-token-not-valid-Qm9vdHN0cmFwX3NhbXBsZV90b2tlbg"
        let device = "iPhone · 321Fit 4.2"
        let advice = ImpliedMessages.secureAccountAdvice
        var code: String?
        var path: String?
        var details: [String: String]?
        switch template {
        case "otp": code = "482915"
        case "verify_email": path = "verify-email"
        case "password_reset": path = "reset-password"
        case "reauth_link": path = "reauth"
        case "email_change_confirm", "email_add_confirm": path = "confirm-email-change"
        case "email_change_notice": break
        case "email_changed_notice":
            path = "revert-email"
            details = ["message": EmailLinks.revertNotice, "secure_account": advice]
        case "email_removed_notice":
            path = "revert-email"
            details = ["message": EmailLinks.removalNotice, "secure_account": advice]
        case ImpliedMessages.newSignInTemplate:
            details = ["device": device, "signed_in_at": stamp(now), "secure_account": advice]
        case ImpliedMessages.twoFactorChangedTemplate:
            details = ["change": "enabled", "changed_at": stamp(now), "method": "totp", "secure_account": advice]
        case ImpliedMessages.twoFactorLimitReachedTemplate:
            details = [
                "paused_until": stamp(now.addingTimeInterval(86_400)), "reached_at": stamp(now), "during": "sign_in",
                "secure_account": advice,
            ]
        case ImpliedMessages.methodAddedTemplate, ImpliedMessages.methodRemovedTemplate:
            details = ["method": "google", "changed_at": stamp(now), "device": device, "secure_account": advice]
        case ImpliedMessages.passwordChangedTemplate:
            details = ["changed_at": stamp(now), "device": device, "secure_account": advice]
        case StaffConsole.invitationTemplate:
            path = "console/invitation"
            details = ["role": "admin"]
        case ImpliedMessages.changedBySupportTemplate:
            details = ["action": "method_removed", "method": "phone", "changed_at": stamp(now), "secure_account": advice]
        case ImpliedMessages.passkeySuspectTemplate:
            details = ["passkey": "YubiKey 5C", "detected_at": stamp(now), "secure_account": advice]
        default:
            code = "482915"
            path = "verify-email"
            details = ["device": device, "changed_at": stamp(now), "secure_account": advice]
        }
        return OutboxMessage(
            channel: channel, to: channel == .sms ? "+995511200300" : "jdoe@mail.com", template: template, code: code,
            link: path.map { "\(linkBase)/\($0)?token=\(token)" }, token: path == nil ? nil : token, locale: locale, details: details)
    }
}
