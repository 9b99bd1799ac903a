package embed

import "fmt"

// Level is the depth of the Dewey Decimal Classification a Classifier uses.
type Level int

const (
	// LevelMain is the ten main classes, 000 to 900.
	LevelMain Level = iota
	// LevelDivision is the hundred divisions, 000 to 990, of which the 99
	// in use are ranked (040 has been vacant since DDC 16).
	LevelDivision
)

// String returns "main" or "division".
func (l Level) String() string {
	switch l {
	case LevelMain:
		return "main"
	case LevelDivision:
		return "division"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel parses "main" or "division" (also "class", "10", "100").
func ParseLevel(s string) (Level, error) {
	switch s {
	case "main", "class", "classes", "10":
		return LevelMain, nil
	case "division", "divisions", "100":
		return LevelDivision, nil
	}
	return 0, fmt.Errorf("unknown DDC level %q (want main or division)", s)
}

// Class is one DDC class or division. The names and descriptions are
// fragility's own short wording of what each number covers, written to be
// embedded; they are not the DDC's official captions.
type Class struct {
	Code        string `json:"code"` // three digits: "500", "510"
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Text returns what is embedded for the class: "Name: Description".
func (c Class) Text() string { return c.Name + ": " + c.Description }

// Classes returns the classes of a level, in numeric order: 10 for
// LevelMain, 99 for LevelDivision (040 is vacant). The slice is a copy.
func Classes(l Level) ([]Class, error) {
	var src []Class
	switch l {
	case LevelMain:
		src = mainClasses
	case LevelDivision:
		src = divisions
	default:
		return nil, fmt.Errorf("unknown DDC level %d", int(l))
	}
	return append([]Class(nil), src...), nil
}

var mainClasses = []Class{
	{"000", "Computing and information", "computers, software and programming, the internet, libraries, encyclopedias and the news media"},
	{"100", "Philosophy and psychology", "philosophy, logic, ethics and morality, the mind, emotions and human behaviour"},
	{"200", "Religion", "religion, God and gods, faith, prayer, worship, churches and holy scriptures"},
	{"300", "Social sciences", "society, economics, money and trade, politics, government, law, education and customs"},
	{"400", "Language", "languages, linguistics, grammar, vocabulary, spelling and translation"},
	{"500", "Science and mathematics", "mathematics, arithmetic and counting, numbers and quantities, physics, chemistry, astronomy, biology, plants and animals"},
	{"600", "Technology and applied science", "medicine and health, engineering, machines, farming, cooking and food, business management and manufacturing"},
	{"700", "Arts and recreation", "architecture, painting, sculpture, photography, music, sports, games and entertainment"},
	{"800", "Literature", "novels, poetry, plays, stories and essays, writers and literary criticism"},
	{"900", "History and geography", "history, past events, ancient empires, kings, wars and revolutions, geography, countries and travel, biographies"},
}

var divisions = []Class{
	{"000", "Computer science and general knowledge", "computers, programming, software, data processing, information and systems, knowledge in general"},
	{"010", "Bibliographies", "lists and catalogues of books and other publications"},
	{"020", "Library and information science", "libraries, librarians, archives, and organising and finding information"},
	{"030", "General encyclopedias", "encyclopedias, almanacs and books of general facts"},
	{"050", "Periodicals", "general magazines, journals and other serial publications"},
	{"060", "Organisations and museums", "associations, societies, institutions and museums of a general kind"},
	{"070", "News media and publishing", "journalism, newspapers, broadcasting news, and the publishing of books"},
	{"080", "General collections", "quotations, collected writings and anthologies on many subjects"},
	{"090", "Manuscripts and rare books", "handwritten documents, early printed books and other rare items"},
	{"100", "Philosophy", "philosophy in general, its methods and the study of ideas"},
	{"110", "Metaphysics", "the nature of being, reality, existence, time, space and causation"},
	{"120", "Epistemology", "knowledge, belief, certainty, and how we come to know things; the human person"},
	{"130", "Parapsychology and the occult", "paranormal phenomena, dreams, astrology, fortune telling and the occult"},
	{"140", "Philosophical schools", "schools and systems of philosophy such as idealism, empiricism and existentialism"},
	{"150", "Psychology", "the mind and behaviour: perception, memory, emotion, learning, motivation and personality"},
	{"160", "Logic", "reasoning, argument, inference, fallacies and formal logic"},
	{"170", "Ethics", "morality, right and wrong, duties, virtues and the ethics of everyday life"},
	{"180", "Ancient, medieval and Eastern philosophy", "the philosophy of antiquity, of the Middle Ages and of Asian traditions"},
	{"190", "Modern Western philosophy", "philosophers of Europe and the Americas since the Renaissance"},
	{"200", "Religion in general", "religion as a whole and religious thought"},
	{"210", "Philosophy of religion", "natural theology, the existence and nature of God, religion and reason"},
	{"220", "The Bible", "the Old and New Testaments, their books, translations and interpretation"},
	{"230", "Christian theology", "Christian doctrine: God, Jesus Christ, salvation, the church and the last things"},
	{"240", "Christian life and devotion", "Christian moral life, prayer, meditation and devotional writing"},
	{"250", "Christian ministry and orders", "pastoral care, preaching, parishes and religious orders"},
	{"260", "Church organisation and worship", "church government, missions, social work of churches, sacraments and public worship"},
	{"270", "History of Christianity", "the history of the Christian church across periods and places"},
	{"280", "Christian denominations", "Catholic, Orthodox, Protestant and other Christian churches"},
	{"290", "Other religions", "Judaism, Islam, Hinduism, Buddhism, and other faiths and mythologies"},
	{"300", "Social sciences and sociology", "society, social groups, culture, communities and social change"},
	{"310", "Statistics", "collections of general statistics and population figures"},
	{"320", "Political science", "government, the state, political parties, elections, rights and international relations"},
	{"330", "Economics", "money, prices, wages, work, banking, investment, markets and trade of goods"},
	{"340", "Law", "laws, courts, legal systems, contracts, crime and justice"},
	{"350", "Public administration and military science", "running the public sector, public services, armed forces and war"},
	{"360", "Social problems and services", "welfare, social work, insurance, crime prevention, safety and public health services"},
	{"370", "Education", "schools, teaching, learning, pupils and students, curricula and universities"},
	{"380", "Commerce, communication and transport", "buying and selling, shops, postal and telecommunication services, railways, shipping and road transport"},
	{"390", "Customs and folklore", "customs, etiquette, costume, festivals, rites of passage and folk tales"},
	{"400", "Language in general", "language as a whole and writing systems"},
	{"410", "Linguistics", "the scientific study of language: sounds, grammar, meaning and language change"},
	{"420", "English", "the English language, its grammar, spelling, usage and dictionaries"},
	{"430", "German and related languages", "German, Dutch, the Scandinavian languages and other Germanic languages"},
	{"440", "French and related languages", "the French language and its relatives"},
	{"450", "Italian and Romanian", "the Italian, Romanian and related languages"},
	{"460", "Spanish and Portuguese", "the Spanish, Portuguese and Galician languages"},
	{"470", "Latin", "Latin and the other Italic languages"},
	{"480", "Greek", "classical and modern Greek"},
	{"490", "Other languages", "languages of Asia, Africa, the Americas, Oceania and elsewhere"},
	{"500", "Natural sciences in general", "science as a whole and scientific method"},
	{"510", "Mathematics", "arithmetic, numbers, counting, addition, subtraction, multiplication and division, fractions, algebra, geometry, probability and word problems"},
	{"520", "Astronomy", "stars, planets, the sun and moon, space, calendars and time measurement"},
	{"530", "Physics", "matter, energy, motion, forces, heat, light, sound, electricity and magnetism"},
	{"540", "Chemistry", "elements, compounds, chemical reactions, laboratory work and the chemistry of minerals"},
	{"550", "Earth sciences", "geology, rocks, volcanoes, earthquakes, weather, climate, oceans and rivers"},
	{"560", "Palaeontology", "fossils and prehistoric life such as dinosaurs"},
	{"570", "Biology", "life, cells, genetics, evolution, ecology and microorganisms"},
	{"580", "Plants", "botany: trees, flowers, seeds and how plants grow"},
	{"590", "Animals", "zoology: wild animals, birds, fish, insects and their behaviour"},
	{"600", "Technology in general", "applied science and inventions as a whole"},
	{"610", "Medicine and health", "the human body, diseases, doctors, hospitals, medicines, nutrition and fitness"},
	{"620", "Engineering", "machines, engines, electronics, vehicles, mechanical, civil and electrical engineering"},
	{"630", "Agriculture", "farming, crops, gardens, livestock, fishing and forestry"},
	{"640", "Home and family management", "cooking and recipes, food and drink, household budgets, clothing, cleaning and childcare"},
	{"650", "Management and business", "running a business, offices, accounting, marketing, advertising and public relations"},
	{"660", "Chemical engineering", "industrial chemistry, food technology, fuels, plastics and metallurgy"},
	{"670", "Manufacturing", "factories and the making of products from metal, wood, paper, textiles and other materials"},
	{"680", "Products for specific uses", "crafted and manufactured goods such as tools, furniture, toys and musical instruments"},
	{"690", "Building and construction", "constructing houses and buildings, building materials, carpentry and plumbing"},
	{"700", "The arts in general", "art as a whole, art history and the fine and decorative arts"},
	{"710", "Landscape and area planning", "town planning, parks, gardens as design and landscape architecture"},
	{"720", "Architecture", "the design of buildings and architectural styles"},
	{"730", "Sculpture and related arts", "sculpture, carving, ceramics, pottery, metalwork, coins and medals"},
	{"740", "Drawing and decorative arts", "drawing, cartoons, design, textiles and handicrafts"},
	{"750", "Painting", "paintings, painters and painting techniques"},
	{"760", "Printmaking and graphic arts", "prints, engraving and other graphic arts"},
	{"770", "Photography", "photography, cameras, film and digital images"},
	{"780", "Music", "music, composers, instruments, songs and performance"},
	{"790", "Sports, games and entertainment", "sports, outdoor recreation, board and card games, theatre, film, television and performing arts"},
	{"800", "Literature in general", "literature as a whole, rhetoric, creative writing and literary criticism"},
	{"810", "American literature", "poetry, fiction, drama and essays written in English in North America"},
	{"820", "English literature", "poetry, fiction, drama and essays written in English in Britain and elsewhere"},
	{"830", "German literature", "literature in German and related languages"},
	{"840", "French literature", "literature in French and related languages"},
	{"850", "Italian literature", "literature in Italian, Romanian and related languages"},
	{"860", "Spanish and Portuguese literature", "literature in Spanish, Portuguese and Galician"},
	{"870", "Latin literature", "literature in Latin and other Italic languages"},
	{"880", "Greek literature", "classical and modern Greek literature"},
	{"890", "Literatures of other languages", "literature in the languages of Asia, Africa, the Americas and elsewhere"},
	{"900", "History in general", "history as a whole and how history is studied"},
	{"910", "Geography and travel", "places, maps, atlases, travel and exploration"},
	{"920", "Biography and genealogy", "lives of people, family history and heraldry"},
	{"930", "Ancient history", "the ancient world up to about AD 500"},
	{"940", "History of Europe", "the history of European countries"},
	{"950", "History of Asia", "the history of Asian countries, including the Middle East"},
	{"960", "History of Africa", "the history of African countries"},
	{"970", "History of North America", "the history of Canada, the United States, Mexico and Central America"},
	{"980", "History of South America", "the history of South American countries"},
	{"990", "History of other areas", "the history of Australia, New Zealand, the Pacific islands and the polar regions"},
}
