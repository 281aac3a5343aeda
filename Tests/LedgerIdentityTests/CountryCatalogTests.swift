import LedgerIdentity
import Testing

@Suite("Country picker list")
struct CountryCatalogTests {
    let catalog = CountryCatalog.standard

    @Test("all 245 regions, with the product's length rules for GE, US and GB")
    func data() throws {
        #expect(catalog.countries.count == 245)
        #expect(catalog.country(iso: "GE")?.nationalLengths == [9])
        #expect(catalog.country(iso: "US")?.nationalLengths == [10])
        #expect(catalog.country(iso: "GB")?.nationalLengths == [10])
        #expect(catalog.country(iso: "GE")?.dialCode == "+995")
        #expect(catalog.country(iso: "AM")?.flag == "🇦🇲")
    }

    @Test("names as the apps' picker shows them: Russia, Turkey; every region has a name")
    func names() {
        let seeds = [
            "GE": "Georgia", "US": "United States", "GB": "United Kingdom", "DE": "Germany", "AM": "Armenia", "AZ": "Azerbaijan",
            "FR": "France", "IT": "Italy", "KZ": "Kazakhstan", "NL": "Netherlands", "PL": "Poland", "RU": "Russia", "ES": "Spain",
            "TR": "Turkey", "UA": "Ukraine",
        ]
        for (iso, name) in seeds { #expect(catalog.country(iso: iso)?.name == name) }
        #expect(catalog.countries.allSatisfy { $0.name.count > 2 && $0.name != $0.iso })
    }

    @Test(
        "the locale's country first, then GE, US, GB, then the rest by name",
        arguments: [
            ("de-DE", ["DE", "GE", "US", "GB"]),
            ("ka-GE", ["GE", "US", "GB"]),
            ("en_US", ["US", "GE", "GB"]),
            ("en", ["GE", "US", "GB"]),
            ("zz-QQ", ["GE", "US", "GB"]),
            ("zh-Hant-TW", ["TW", "GE", "US", "GB"]),
        ])
    func ordering(locale: String, head: [String]) {
        let list = catalog.ordered(locale: locale)
        #expect(list.count == 245)
        #expect(Array(list.prefix(head.count).map(\.iso)) == head)
        let rest = list.dropFirst(head.count).map(\.name)
        #expect(rest == rest.sorted { $0.localizedStandardCompare($1) == .orderedAscending })
        #expect(Set(list.map(\.iso)).count == 245)
    }
}
