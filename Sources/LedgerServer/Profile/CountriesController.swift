import Foundation
import HTTPTypes
import Hummingbird
import LedgerIdentity

/// `GET /countries?locale=ka-GE`: the phone picker's list, the caller's country first.
public struct CountriesController: Sendable {
    let catalog: CountryCatalog

    public init(catalog: CountryCatalog = .standard) {
        self.catalog = catalog
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/countries") { request, _ in
            let locale =
                request.uri.queryParameters["locale"].map(String.init)
                ?? AcceptLanguage.firstLanguage(request.headers[.acceptLanguage])
            let countries = catalog.ordered(locale: locale).map { country in
                JSONValue.object([
                    "iso": .string(country.iso), "name": .string(country.name), "flag": .string(country.flag),
                    "dial_code": .string(country.dialCode),
                    "national_lengths": .array(country.nationalLengths.map { .int(Int64($0)) }),
                    // Beyond the contract's fields (openapi.yaml documents it): the trunk prefix a person may type first ("07400 123456"
                    // in the UK: 10 digits after it, 11 with it), which the service strips.
                    "national_prefix": JSONValue(country.nationalPrefix),
                ])
            }
            return JSONResponse(.ok, ["countries": .array(countries)])
        }
        return routes
    }
}
