import { seededRandom } from '../../../lib/seeded-random.js';

// The conversations and questions of `npm run bench:memory-quality` (issue 14): seeded, so every
// run asks the same questions of the same chats. Two or three friends chat in ~20 sessions spread
// over months; most lines are small talk and reactions, and the facts (jobs, moves, pets, trips,
// hobbies, family, purchases, health, tastes) come up in passing, are referred to later by name or
// pronoun, and change. Questions paraphrase what they ask about; each names the turns that hold
// its answer. Nothing here is tuned to a retrieval method: the templates were written as people
// chat, and the questions as people ask.

export type QuestionKind = 'single-hop' | 'multi-hop' | 'temporal' | 'open-domain' | 'knowledge-update' | 'as-of';
/** The kinds of issue 14, which the overall figure is over (so it stays comparable across runs). */
export const CORE_KINDS: QuestionKind[] = ['single-hop', 'multi-hop', 'temporal', 'open-domain'];
/** Questions about facts that changed: the value now or before, and the value at a time (`as_of`). */
export const CHANGE_KINDS: QuestionKind[] = ['knowledge-update', 'as-of'];
export const QUESTION_KINDS: QuestionKind[] = [...CORE_KINDS, ...CHANGE_KINDS];

export interface Turn {
  /** `<conversation>:s<session>:t<turn>`, e.g. `conv-3:s12:t7`. */
  id: string;
  speaker: string;
  text: string;
  /** When it was said, unix seconds. */
  time: number;
}

export interface Session {
  index: number;
  /** ISO time of the session's first turn. */
  date: string;
  turns: Turn[];
}

export interface Conversation {
  id: string;
  speakers: string[];
  sessions: Session[];
}

export interface Question {
  id: string;
  conversation: string;
  kind: QuestionKind;
  question: string;
  answer: string;
  /** The turns that hold the answer (all of them are needed for a multi-hop question). */
  evidence: string[];
  /** Turns that stated a value the evidence replaced (a knowledge-update question about the value now). */
  superseded?: string[];
  /** The time the question asks about, unix seconds: searched with `as_of` (an as-of question). */
  as_of?: number;
  /**
   * The facts track: the question is asked of one person's memories (`owner`, their user_id) —
   * their own chat lines stored as given and the facts they told the assistant (`Dataset.facts`,
   * added with infer) — instead of the conversation's; `include_superseded` for a question about
   * a value before, which a client asks of the history.
   */
  owner?: string;
  include_superseded?: boolean;
}

/** A fact a person tells the assistant (a mem0 add with infer), at the time it became true; its id stands for the memory holding its text. */
export interface Fact {
  id: string;
  /** The person's user_id: `<conversation>/<name>`. */
  owner: string;
  conversation: string;
  speaker: string;
  time: number;
  text: string;
}

export interface Dataset {
  seed: number;
  conversations: Conversation[];
  questions: Question[];
  /** The facts track's facts (generated data only). */
  facts?: Fact[];
}

const DAY = 86_400_000;
/** Added to the seed for the generator of the knowledge-update and as-of questions. */
const CHANGE_SEED_OFFSET = 0x5eed;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = seededRandom(seed);
  }
  float(): number {
    return this.next();
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)] as T;
  }
  shuffle<T>(list: readonly T[]): T[] {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// People and the things they talk about

interface Person {
  name: string;
  subj: string;
  obj: string;
  poss: string;
}

const WOMEN = ['Maya', 'Priya', 'Hannah', 'Sofia', 'Aisha', 'Grace', 'Lena', 'Rosa', 'Chloe', 'Nadia', 'Ingrid', 'Tessa', 'Mei', 'Olivia', 'Zara', 'Amara'];
const MEN = ['Daniel', 'Marcus', 'Tom', 'Ravi', 'Jonas', 'Luca', 'Omar', 'Felix', 'Theo', 'Kenji', 'Mateo', 'Elliot', 'Victor', 'Noah', 'Samir', 'Hugo'];
const SISTERS = ['Beth', 'Dina', 'Fiona', 'Iris', 'Kat', 'Mira', 'Pia', 'Ruth'];
const BROTHERS = ['Carlos', 'Erik', 'Gus', 'Jamal', 'Leo', 'Nate', 'Quinn', 'Sven'];
const RELATIVES = [...SISTERS, ...BROTHERS];

const CITIES = ['Porto', 'Lyon', 'Denver', 'Leeds', 'Glasgow', 'Toronto', 'Melbourne', 'Kraków', 'Valencia', 'Seattle', 'Dublin', 'Rotterdam', 'Tucson', 'Halifax', 'Bristol', 'Austin', 'Gothenburg', 'Wellington'];
const CITY_LIFE = [
  (c: string) => `Another grey morning here in ${c}, I swear the sun forgot about us`,
  (c: string) => `I've lived in ${c} six years and I still get lost in the old town`,
  (c: string) => `${c} traffic today was unreal, took me an hour to go four miles`,
  (c: string) => `Walked along the river in ${c} after work, first warm evening in ages`,
  (c: string) => `My flat in ${c} is tiny but the rent is fair, so I can't complain`,
];
const MOVE_REASONS = [
  { why: 'a partner got a job offer there', line: (c: string, partner: string) => `${partner} got a job offer in ${c} that was too good to turn down, so we're packing everything up and moving` },
  { why: 'to be closer to family', line: (c: string) => `My parents aren't getting any younger, so I'm moving back to ${c} to be near them` },
  { why: 'the rent had become too expensive', line: (c: string) => `The landlord put the rent up again. I'm done. Moving to ${c} where I can actually afford a second bedroom` },
  { why: 'to start a master’s programme', line: (c: string) => `I got into the master's programme! Which means... I'm relocating to ${c} in August` },
];
const NEW_HOME = [
  (c: string) => `First week in the new place in ${c} done. The view from the balcony makes up for the tiny kitchen`,
  (c: string) => `Boxes are finally unpacked in ${c}. The neighbours brought us cake, which never happened before`,
  (c: string) => `Survived the move to ${c}! Still sleeping on a mattress on the floor though`,
];

interface Job {
  title: string;
  shop: string;
  grind: string;
}
const JOBS: Job[] = [
  { title: 'nurse', shop: 'the ward at St. Anne’s', grind: 'Three night shifts on the ward in a row, I’m running on vending machine coffee' },
  { title: 'secondary school teacher', shop: 'Hillcrest Academy', grind: 'Ninety essays on the Industrial Revolution to mark before Monday. Pray for me' },
  { title: 'line cook', shop: 'Marlow’s Bistro', grind: 'Brunch rush was brutal today, I flipped maybe two hundred eggs' },
  { title: 'data analyst', shop: 'Northgate Logistics', grind: 'Spent the whole day fixing a spreadsheet someone broke with one pasted column' },
  { title: 'paralegal', shop: 'Hale & Brandt', grind: 'Filing deadline at five, I printed so many exhibits the copier gave up' },
  { title: 'physiotherapist', shop: 'the sports clinic on Elm Street', grind: 'Eleven patients today and every single one skipped their home exercises' },
  { title: 'graphic designer', shop: 'a small branding agency', grind: 'Client wants the logo bigger. And smaller. At the same time' },
  { title: 'electrician', shop: 'Brightwire Services', grind: 'Rewired a whole kitchen today in a house built in 1920, nothing was where it should be' },
  { title: 'librarian', shop: 'the central library', grind: 'Story time with twenty toddlers this morning, my voice is gone' },
  { title: 'sales rep', shop: 'a medical supplies company', grind: 'Drove four hundred kilometres for two meetings today, my back hates me' },
];
const NEW_JOBS = [
  { title: 'project coordinator', company: 'Fernhill Energy', perk: 'proper weekends for once' },
  { title: 'UX researcher', company: 'Lumen Health', perk: 'I can work from home two days a week' },
  { title: 'operations manager', company: 'Tidewater Foods', perk: 'a real pay bump' },
  { title: 'training lead', company: 'Orbit Fitness', perk: 'free gym, obviously' },
  { title: 'junior developer', company: 'Pinecone Software', perk: 'they pay for my courses' },
  { title: 'team lead', company: 'Harbourline Insurance', perk: 'no more commuting across town' },
];
const BOSSES = ['Gloria', 'Martin', 'Yusuf', 'Helen', 'Brendan', 'Anika'];

interface Pet {
  kind: 'dog' | 'cat' | 'rabbit';
  young: string;
  breeds: string[];
  antics: Array<(n: string, s: string) => string>;
}
const PETS: Pet[] = [
  {
    kind: 'dog',
    young: 'puppy',
    breeds: ['beagle', 'border collie', 'corgi', 'greyhound', 'labrador mix', 'dachshund'],
    antics: [
      (n) => `${n} ate one of my running socks and we had a very expensive vet visit`,
      (n, s) => `${n} has learned to open the pantry door. ${cap(s)} is a criminal mastermind`,
      (n) => `Took ${n} to the beach for the first time, zoomies for an hour straight`,
      (n, s) => `${n} passed puppy class! ${cap(s)} was the only one who wouldn't sit but they passed everyone`,
    ],
  },
  {
    kind: 'cat',
    young: 'kitten',
    breeds: ['tabby', 'Maine Coon', 'black shorthair', 'Siamese mix'],
    antics: [
      (n) => `${n} knocked my coffee off the desk during a video call, the whole team saw`,
      (n, s) => `${n} sleeps on my keyboard now. ${cap(s)} typed an email to my boss this morning`,
      (n) => `${n} caught a moth at 3am and announced it to the whole flat`,
    ],
  },
  {
    kind: 'rabbit',
    young: 'bunny',
    breeds: ['lop-eared', 'Netherland dwarf', 'lionhead'],
    antics: [
      (n) => `${n} chewed through the cable of my headphones, third pair this year`,
      (n, s) => `${n} does little jumps when I come home, ${s} is the best`,
    ],
  },
];
const PET_NAMES = ['Biscuit', 'Pepper', 'Mochi', 'Juniper', 'Otis', 'Waffles', 'Luna', 'Ziggy', 'Noodle', 'Clementine', 'Bruno', 'Pickles', 'Hazel', 'Miso'];
const PET_AGES = ['ten weeks', 'four months', 'about six months', 'two years', 'three years'];

interface Trip {
  place: string;
  landmark: string;
  food: string;
  country: string;
}
const TRIPS: Trip[] = [
  { place: 'Lisbon', landmark: 'rode the old yellow tram up to the castle', food: 'custard tarts, warm, at nine in the morning', country: 'Portugal' },
  { place: 'Kyoto', landmark: 'walked through the bamboo grove at sunrise before the crowds', food: 'a tiny ramen bar with eight seats', country: 'Japan' },
  { place: 'Iceland', landmark: 'stood on the black sand beach while the waves tried to eat us', food: 'lamb soup at a gas station, somehow the best meal of the trip', country: 'Iceland' },
  { place: 'Mexico City', landmark: 'climbed the Pyramid of the Sun at Teotihuacan', food: 'tacos al pastor from a street stand, every single night', country: 'Mexico' },
  { place: 'Rome', landmark: 'saw the Colosseum lit up at night', food: 'cacio e pepe in a place with no menu', country: 'Italy' },
  { place: 'Edinburgh', landmark: "hiked up Arthur's Seat in sideways rain", food: 'fish and chips on the harbour at Leith', country: 'Scotland' },
  { place: 'Banff', landmark: 'canoed on Lake Louise, the water is that unreal blue', food: 'elk burgers, don’t judge me', country: 'Canada' },
  { place: 'Marrakech', landmark: 'got thoroughly lost in the souks of the medina', food: 'lamb tagine with prunes, I dream about it', country: 'Morocco' },
  { place: 'New Orleans', landmark: 'heard a brass band on Frenchmen Street until 2am', food: 'beignets covered in powdered sugar', country: 'the US' },
  { place: 'Vienna', landmark: 'spent a whole afternoon at the Belvedere looking at Klimt', food: 'a schnitzel bigger than the plate', country: 'Austria' },
  { place: 'Crete', landmark: 'swam at a beach with pink sand', food: 'grilled octopus by the water', country: 'Greece' },
  { place: 'Montreal', landmark: 'went up Mount Royal for the view', food: 'poutine at 1am, as is tradition', country: 'Canada' },
];
const COMPANIONS = ['my cousin', 'my college roommate', 'my partner', 'my sister', 'my old coworker'];

interface Hobby {
  start: string;
  habit: string;
  when: string;
  progress: string;
  event: string;
  eventAsk: string;
  ask: string;
  od: { question: string; answer: string };
}
const HOBBIES: Hobby[] = [
  {
    habit: 'go to pottery class',
    start: 'I finally signed up for that wheel-throwing class at the community studio',
    when: 'Thursday evenings, two hours, and you get to use the kiln',
    progress: 'My first mug came out of the kiln lopsided and I love it more than anything I own',
    event: 'the studio’s open house sale, I sold four bowls',
    eventAsk: 'sell pieces at a studio sale',
    ask: 'What craft class did {P} join?',
    od: { question: 'Would {P} enjoy a weekend crafts fair?', answer: 'Likely yes; {subj} took up pottery and sells bowls' },
  },
  {
    habit: 'go climbing',
    start: 'I joined the bouldering gym near the station, the one with the orange walls',
    when: 'Mostly Monday and Wednesday after work',
    progress: 'Sent my first V4 today! My forearms are screaming',
    event: 'my first little bouldering competition, came 9th out of 30',
    eventAsk: 'compete in a climbing competition',
    ask: 'Which indoor sport did {P} get into?',
    od: { question: 'Would {P} be up for an outdoor rock climbing trip?', answer: 'Likely yes; {subj} climbs at a bouldering gym' },
  },
  {
    habit: 'rehearse with the choir',
    start: 'So I joined a community choir. Me! Singing in public!',
    when: 'Tuesday nights in the church hall on Kingsley Road',
    progress: 'The director gave me a tiny solo in the second verse, I nearly passed out',
    event: 'our winter concert, my mum cried in the front row',
    eventAsk: 'perform at a concert',
    ask: 'What group did {P} join that performs music?',
    od: { question: 'Would {P} appreciate tickets to a choral performance?', answer: 'Likely yes; {subj} sings in a choir' },
  },
  {
    habit: 'practise guitar',
    start: 'I bought a secondhand acoustic guitar and I’m teaching myself with videos',
    when: 'Half an hour every night before bed, my fingertips are wrecked',
    progress: 'I can finally play a whole song without stopping to look at my hand',
    event: 'an open mic, played two songs and didn’t throw up',
    eventAsk: 'play at an open mic',
    ask: 'What instrument is {P} learning?',
    od: { question: 'Would {P} like a gift card for a music shop?', answer: 'Likely yes; {subj} is learning guitar' },
  },
  {
    habit: 'feed the sourdough starter',
    start: 'I have a sourdough starter now. His name is Doughbert and he lives on my counter',
    when: 'I feed him every morning before work, it’s like a second pet',
    progress: 'Finally got a loaf with a proper open crumb, I took forty photos of it',
    event: 'the village baking contest, my rye got second place',
    eventAsk: 'win a prize at a baking contest',
    ask: 'What has {P} been making at home with a starter?',
    od: { question: 'Would {P} enjoy a class on artisan bread?', answer: 'Likely yes; {subj} bakes sourdough' },
  },
  {
    habit: 'go trail running',
    start: 'I started trail running with a group that meets at the reservoir',
    when: 'Saturday mornings at seven, rain or shine, mostly rain',
    progress: 'Did the full fifteen kilometre loop without walking the hills',
    event: 'my first trail half marathon, finished in two hours forty',
    eventAsk: 'run a trail half marathon',
    ask: 'What kind of running did {P} take up?',
    od: { question: 'Would {P} rather spend a Saturday morning outdoors or at the mall?', answer: 'Outdoors; {subj} trail runs on Saturday mornings' },
  },
  {
    habit: 'play at the chess club',
    start: 'I got back into chess, I play online every night and joined a club downtown',
    when: 'The club meets Wednesdays in the back of a café',
    progress: 'My rating went up a hundred points this month, I’ve been studying endgames',
    event: 'a weekend tournament, I won three games out of five',
    eventAsk: 'play in a chess tournament',
    ask: 'What board game has {P} been playing seriously?',
    od: { question: 'Would {P} enjoy a strategy puzzle book as a gift?', answer: 'Likely yes; {subj} plays chess competitively' },
  },
  {
    habit: 'paint',
    start: 'I’ve started watercolour painting, I bought a little travel set',
    when: 'Sunday afternoons at the kitchen table, with terrible jazz on',
    progress: 'Painted the view from my window and it actually looks like the view',
    event: 'a group exhibition at the library, two of my paintings were in it',
    eventAsk: 'show paintings in an exhibition',
    ask: 'What art form did {P} pick up?',
    od: { question: 'Would {P} enjoy a day at an art museum?', answer: 'Likely yes; {subj} paints watercolours' },
  },
  {
    habit: 'work on the allotment',
    start: 'I got an allotment! A real one, with a shed and everything',
    when: 'I’m there most evenings now, watering and fighting slugs',
    progress: 'First tomatoes of the season, I ate them standing right there in the dirt',
    event: 'the allotment society show, my courgette won a ribbon',
    eventAsk: 'win a ribbon at a vegetable show',
    ask: 'What did {P} get to grow vegetables on?',
    od: { question: 'Would {P} like a gift of heirloom seeds?', answer: 'Likely yes; {subj} keeps an allotment' },
  },
  {
    habit: 'go to salsa class',
    start: 'I signed up for salsa lessons with my neighbour, we’re both hopeless',
    when: 'Friday nights at a studio above a bakery',
    progress: 'We made it through a whole song without stepping on each other',
    event: 'the studio’s showcase night, we danced in front of about eighty people',
    eventAsk: 'dance at a showcase',
    ask: 'What kind of dance lessons did {P} start?',
    od: { question: 'Would {P} enjoy a night at a Latin dance club?', answer: 'Likely yes; {subj} takes salsa lessons' },
  },
];

interface Taste {
  lines: [string, string];
  /** A pet this taste rules out. */
  noPet?: Pet['kind'];
  question: string;
  answer: string;
}
const TASTES: Taste[] = [
  {
    lines: ['We camped by the lake all weekend, no signal for two days and I didn’t miss it once', 'Honestly give me a tent and a trail over a spa hotel any day'],
    question: 'Would {P} enjoy a week-long hiking and camping trip?',
    answer: 'Yes; {subj} loves camping and trails',
  },
  {
    lines: ['Big crowds drain me, I left the party after an hour and felt zero regret', 'My ideal Friday is takeout, a blanket and nobody calling me'],
    question: 'Would {P} want to spend New Year’s Eve at a packed street festival?',
    answer: 'Probably not; {subj} finds crowds draining and prefers quiet nights in',
  },
  {
    lines: ['I stopped eating meat about three years ago and I don’t miss it at all', 'Made a lentil and spinach curry that even my dad went back for seconds of'],
    question: 'What kind of restaurant would be a good pick for dinner with {P}?',
    answer: 'A vegetarian-friendly one; {subj} hasn’t eaten meat in years',
  },
  {
    lines: ['Flying is the worst part of any trip for me, I white-knuckle the whole thing', 'I’d honestly take a twelve hour train over a two hour flight'],
    question: 'Would {P} prefer a road trip or a long-haul flight for a holiday?',
    answer: 'A road trip; {subj} is afraid of flying',
  },
  {
    noPet: 'cat',
    lines: ['Being near a cat makes my eyes swell shut within ten minutes', 'I had to leave Jo’s birthday early, her two cats found me immediately'],
    question: 'Would {P} be comfortable house-sitting for a friend who has cats?',
    answer: 'No; {subj} is allergic to cats',
  },
  {
    lines: ['Just finished another space opera, that’s five in a row, I can’t stop', 'Nothing hits like a good book about a generation ship drifting between stars'],
    question: 'What genre of novel would make a good birthday gift for {P}?',
    answer: 'Science fiction, especially space opera',
  },
  {
    lines: ['I’m up at five every day, the quiet before everyone wakes is the best part', 'I’m useless after ten at night, I fell asleep at the cinema again'],
    question: 'Would {P} enjoy a concert that starts at eleven at night?',
    answer: 'Probably not; {subj} is an early riser and fades late at night',
  },
  {
    lines: ['I screamed at the TV so loud during the cup final that the neighbours knocked', 'Renewed my season ticket, same seat behind the goal as always'],
    question: 'Would {P} want to watch the big football match with friends?',
    answer: 'Yes; {subj} is a devoted football fan with a season ticket',
  },
  {
    lines: ['I’m saving every penny for a house deposit, I cancelled three subscriptions this week', 'Packed lunches every day this month, my budget spreadsheet is thriving'],
    question: 'Is {P} likely to book a luxury cruise this year?',
    answer: 'Unlikely; {subj} is saving hard for a house deposit',
  },
  {
    lines: ['I volunteer at the animal shelter on Sundays, walking the big dogs nobody picks', 'We had three adoptions at the shelter this week, I cried every time'],
    question: 'What kind of charity would {P} most likely donate to?',
    answer: 'An animal welfare charity; {subj} volunteers at a shelter',
  },
];

interface Purchase {
  old: string;
  line: string;
  what: string;
}
const PURCHASES: Purchase[] = [
  { old: 'car', line: 'Finally traded in the old Corolla for a used electric hatchback, it’s so quiet it feels like cheating', what: 'a used electric hatchback' },
  { old: 'bike', line: 'Bought a proper road bike, carbon frame, I feel like I should be wearing a team jersey', what: 'a carbon road bike' },
  { old: 'sofa', line: 'The new couch got delivered! Green velvet, it takes up the whole living room', what: 'a green velvet couch' },
  { old: 'camera', line: 'Treated myself to a secondhand Fuji camera, I’ve taken four hundred photos of leaves', what: 'a secondhand Fuji camera' },
  { old: 'coffee maker', line: 'Splurged on an espresso machine with a steam wand, my latte art looks like a potato', what: 'an espresso machine' },
  { old: 'laptop', line: 'My laptop died so I got one of those light ones, it boots in like two seconds', what: 'a new lightweight laptop' },
  { old: 'boat', line: 'I bought an inflatable kayak! It fits in the boot of the car', what: 'an inflatable kayak' },
  { old: 'mattress', line: 'New mattress arrived and I slept nine hours straight, I’m a new person', what: 'a new mattress' },
];

interface Injury {
  line: (when: string, sport: string) => string;
  what: string;
  part: string;
  healed: string;
}
const INJURIES: Injury[] = [
  { line: (w, s) => `Sprained my ankle playing ${s} ${w}, on crutches for now`, what: 'sprained ankle', part: 'ankle', healed: 'Crutches are gone! Walking like a normal person again' },
  { line: (w, s) => `Fell badly at ${s} ${w} and broke my wrist, cast up to the elbow`, what: 'broken wrist', part: 'wrist', healed: 'Cast came off today, my arm looks like a pale noodle' },
  { line: (w, s) => `Tore something in my shoulder at ${s} ${w}, physio says six weeks`, what: 'shoulder injury', part: 'shoulder', healed: 'Physio signed me off today, full range of motion back' },
];
const SPORTS = ['five-a-side football', 'basketball', 'volleyball', 'badminton', 'netball'];

// ---------------------------------------------------------------------------------------------
// Small talk: openers, closers and exchanges that carry no fact asked about

const FOODS = ['lasagne', 'pho', 'a burrito the size of my arm', 'leftover curry', 'pancakes', 'toast, again', 'instant noodles', 'a sad desk salad'];
const SHOWS = ['that baking show', 'the new detective series', 'a documentary about octopuses', 'the dating show everyone hates', 'old sitcom reruns', 'the space drama'];
const OPENERS: Array<[string, string]> = [
  ['Hey! It’s been a minute, how are you?', 'Hiii, I’m good! Busy but good. You?'],
  ['Morning! Got a sec?', 'Always for you, what’s up?'],
  ['Heyy, how was your week?', 'Long. {day} felt like three days. Yours?'],
  ['Are you alive?? You went quiet', 'Haha barely. It’s been a week'],
  ['Hi hi, finally a free evening', 'Same! I’ve been waiting all day to sit down'],
  ['Guess who finally has five minutes to chat', 'Ha, look at you. How’s everything?'],
  ['Hey you, how’s life?', 'Chaotic but fine. You first'],
];
const CLOSERS: Array<[string, string]> = [
  ['Ok I have to go make dinner, talk soon!', 'Go go! Talk soon x'],
  ['I’m falling asleep, night!', 'Night! Sleep well'],
  ['Gotta run, meeting in five', 'Good luck! Catch up later'],
  ['This was nice, we should do it more often', 'Agreed. Same time next week?'],
  ['Alright, battery at 2%, bye!', 'Haha bye!'],
  ['Let’s talk properly at the weekend?', 'Deal. Have a good one'],
];
/** Exchanges of small talk: variant i of each line goes with variant i of the others; {slots} vary further. */
const SMALL_TALK: string[][][] = [
  [['What did you have for dinner?', 'What’s for dinner at yours?', 'Did you eat yet?'], ['{food}. Living the dream', '{food}, don’t judge', 'Just {food}, too tired to cook'], ['Honestly same energy over here', 'Sounds better than mine', 'Respect']],
  [['Are you watching anything good?', 'Any show recommendations? I’ve run out', 'What are you watching these days?'], ['Just started {show}, it’s ridiculous and I love it', 'Halfway through {show}, can’t stop', 'Rewatching {show} for the third time'], ['Ooh I’ll add it to the list', 'Adding it now', 'Is it sad? I can’t do sad right now']],
  [['The weather has been so weird lately', 'It’s been raining for like nine days straight', 'Why is it so windy today'], ['Right? Sunny, then hail, then sunny again', 'I’ve given up on having dry socks', 'My umbrella turned inside out on the way to the bus'], ['I gave up on checking the forecast', 'Spring can’t come soon enough', 'We deserve better weather honestly']],
  [['Did you sleep at all? You sound tired', 'You look like you need a nap', 'Rough night?'], ['Like four hours. The neighbours were having a party', 'Kept waking up at 3am for no reason', 'I stayed up reading, regret nothing, regret everything'], ['Ugh, earplugs. Life changing', 'Nap at lunch, I insist', 'Early night tonight then']],
  [['I drank way too much coffee today', 'Third coffee and it’s not even noon', 'I think I’m made of coffee at this point'], ['How many?', 'Are you vibrating?', 'That’s a cry for help'], ['Let’s just say more than three and less than six', 'I can hear colours', 'Switching to tea. Maybe. Tomorrow']],
  [['Mondays should be illegal', 'Is it Friday yet?', 'This week is lasting a month'], ['Agreed. Sign me up for the petition', 'It’s {day}. Sorry', 'Hang in there'], ['Ugh', 'Thanks, I hate it', 'Trying my best']],
  [['I saw the funniest video earlier, a goat yelling at a tractor', 'Did you see the video of the duck that follows the mailman?', 'I’ve watched a clip of a raccoon stealing a cake like ten times'], ['Stop, send it', 'Haha send it please', 'I need it immediately'], ['Sent. You’re welcome', 'Check your messages', 'Done, it’s even better with sound']],
  [['My phone screen cracked again', 'My laptop updated itself in the middle of a call', 'The wifi at home keeps dropping'], ['Nooo, how?', 'Technology hates you specifically', 'Have you tried turning it off and on again'], ['Pocket, stairs, gravity. The usual', 'I’m going to live in a cave', 'Yes. Seventeen times']],
  [['Traffic was a nightmare this morning', 'The bus just didn’t show up today', 'The train was cancelled again'], ['Every morning is a nightmare lately', 'Classic. How late were you?', 'Did you end up walking?'], ['I might start cycling out of spite', 'Forty minutes. My boss just sighed', 'Yep. In the rain. Character building']],
  [['What are you up to this weekend?', 'Any plans for the weekend?', 'Doing anything fun on {day}?'], ['Nothing. Gloriously nothing', 'Laundry and a long nap', 'Groceries, cleaning, the glamorous life', 'Might see a movie if I can be bothered'], ['That sounds perfect honestly', 'Living the dream', 'Honestly I envy that']],
  [['I tried to cook something new and it went badly', 'Attempted a recipe from the internet tonight', 'I burned rice. Rice!'], ['How badly?', 'Oh no, what happened?', 'How do you even burn rice'], ['The smoke alarm was involved', 'We ordered pizza in the end', 'With confidence, apparently']],
  [['Do you ever just stare at the fridge hoping new food appears', 'I need to go grocery shopping so badly', 'My fridge has one lemon and some mustard'], ['Every night', 'Haha same, it’s a lifestyle', 'Mustard on lemon, gourmet'], ['Glad it’s not just me', 'Delivery it is then', 'Chef’s kiss']],
  [['My plants are dying again', 'The basil on my windowsill gave up', 'I bought another plant, don’t tell anyone'], ['Are you overwatering them?', 'RIP basil', 'How many is that now?'], ['Probably. I love them too much', 'It had a good life. Three weeks', 'I don’t want to talk about it']],
  [['Have you heard from the group chat? It’s been dead', 'Haven’t seen the old gang in ages', 'We should do a group dinner soon'], ['Nope. Everyone’s busy I guess', 'Same, everyone vanished', 'Yes! Somewhere with big tables'], ['We should plan something', 'I’ll send a poll, nobody will answer', 'Let’s pick a date before it never happens']],
  [['I finally cleaned my flat', 'Spent {day} deep cleaning the bathroom', 'Did four loads of laundry today'], ['Wow, what’s the occasion?', 'Productive!', 'Who are you and what have you done with my friend'], ['I couldn’t find my keys for two days', 'Guests coming, had no choice', 'Pure procrastination, I have a deadline']],
  [['It’s so hot today', 'The heat is unbearable', 'It’s like an oven in here'], ['I’m lying on the floor like a starfish', 'I’ve got my feet in a bowl of cold water', 'Fan on full blast, still melting'], ['Same, it’s the coolest spot', 'Genius', 'Summer was a mistake']],
  [['It’s freezing, I’m wearing two jumpers', 'My flat is so cold I can see my breath', 'Heating broke again'], ['Heating still not fixed?', 'Tea and a blanket, stat', 'Come over, we have heating'], ['Landlord says next week. He always says next week', 'Already on my second hot water bottle', 'Might take you up on that']],
  [['I spent way too long scrolling last night', 'I fell down an internet rabbit hole about shipwrecks', 'Watched videos of people restoring old tools until 2am'], ['What time did you sleep?', 'Ha, how deep did you go?', 'That’s weirdly relaxing though'], ['Don’t ask', 'Deep. Very deep', 'It is! That’s the problem']],
  [['Random question, tea or coffee?', 'Random question: pineapple on pizza, yes or no?', 'Settle something for me, cats or dogs?'], ['Coffee, obviously. Why?', 'Yes and I’ll fight about it', 'Both, obviously'], ['Settling an argument with my brother', 'Knew I could count on you', 'Diplomatic answer']],
  [['My inbox is at 400 unread', 'I have so many tabs open my laptop is wheezing', 'I still haven’t answered that email from last month'], ['Declare bankruptcy and start fresh', 'Close them. All of them', 'It’s fine, they’ve forgotten by now'], ['Tempting', 'I can’t, they’re important', 'That’s my hope too']],
  [['{day} was such a weird day', 'Today felt really long', 'I’ve been in a funk all day'], ['Why?', 'How come?', 'Aw, what’s up?'], ['Nothing happened but I was tired the whole time', 'No idea, just one of those days', 'Think I just need some sun']],
  [['Have you been to that new café on the corner?', 'There’s a new bakery near my work', 'Found a ramen place that’s open late'], ['Not yet, is it good?', 'Ooh what do they have?', 'How late?'], ['The cinnamon buns are worth it alone', 'Sourdough and almond croissants, dangerous', 'Midnight. I’ve been twice this week']],
  [['I lost my umbrella again', 'I’ve lost my keys twice this week', 'I left my headphones on the train'], ['That’s like the fifth one', 'Put a tracker on them', 'Call the lost and found'], ['I’m single-handedly funding the umbrella industry', 'I’d lose the tracker', 'On hold for twenty minutes so far']],
  [['What’s new with you?', 'Tell me something good', 'Anything exciting happening?'], ['Not much honestly, work and sleep', 'I found a ten in my coat pocket', 'I finished a whole book this week'], ['The classic combo', 'Winning', 'Look at you']],
  [['Do you remember that awful karaoke night?', 'I found old photos from our school trip', 'Remember when we got lost trying to find that festival?'], ['I’ve been trying to forget it for years', 'Oh no, delete them', 'We walked for three hours!'], ['Haha same', 'Never. They’re going in the group chat', 'Best worst day ever']],
  [['I’ve got a song stuck in my head and it’s driving me mad', 'Have you heard the new album everyone’s talking about?', 'Made a new playlist for the commute'], ['Which one?', 'Not yet, is it worth it?', 'Send it!'], ['Some jingle from an ad, the worst', 'The second half is really good', 'Done, it’s mostly old disco']],
  [['My neighbour is learning the trumpet', 'The people upstairs are moving furniture at 11pm again', 'There’s a car alarm that’s been going for an hour'], ['Oh no. Is he any good?', 'What are they even doing up there', 'Someone’s going to snap'], ['He’s improving. Slowly. Very slowly', 'Bowling, apparently', 'It’s going to be me']],
  [['I need a haircut so badly', 'Got a haircut and it’s shorter than I asked for', 'Thinking of dyeing my hair'], ['Book it!', 'It’ll grow back', 'What colour?'], ['Every place is full for weeks', 'That’s what I keep telling myself', 'Maybe dark red? Or I’ll chicken out']],
  [['Did you see the news about the bridge closing?', 'They’re digging up my street again', 'The supermarket moved everything around'], ['Yes, chaos for everyone', 'Didn’t they just finish?', 'Why do they always do that'], ['My commute is doubling', 'Every single year', 'To make us buy more I guess']],
  [['I had the strangest dream last night', 'Dreamt I was back in school doing an exam', 'I dreamt my teeth fell out again'], ['Tell me', 'The classic nightmare', 'That one is the worst'], ['I was a waiter on a boat but the boat was also a bus', 'And I hadn’t studied, of course', 'Woke up checking them']],
  [['Happy {day}!', 'Morning! Surviving?', 'How’s your day going?'], ['Haha thanks, same to you', 'Barely, but yes', 'Slow but okay'], ['One more day to go', 'That’s the spirit', 'Better than nothing']],
  [['Are you going to Sam’s birthday thing?', 'It’s Jo’s birthday next week, any gift ideas?', 'I forgot my cousin’s birthday, I’m the worst'], ['Probably, if I finish work in time', 'Candles? Everyone likes candles', 'Send a late card, it counts'], ['Let’s go together', 'Candles it is', 'Good idea, I’ll do that']],
];
const REACTIONS = ['No way!!', 'Wait, seriously?', 'Oh wow', 'That’s amazing!', 'Aww', 'Haha of course', 'Ugh, I’m sorry', 'Good for you!', 'Love that', 'Omg tell me everything'];

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const fill = (template: string, person: Person): string => template.replaceAll('{P}', person.name).replaceAll('{subj}', person.subj);
const formatDate = (d: Date): string => `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
const monthYear = (d: Date): string => `${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;

/** A phrase for a past moment relative to the session, and the date it names (as precisely as the phrase does). */
interface Moment {
  phrase: string;
  date: Date;
  answer: string;
}

function moment(rng: Rng, session: Date): Moment {
  const dow = session.getUTCDay();
  const shift = (days: number): Date => new Date(session.getTime() - days * DAY);
  switch (rng.int(0, 4)) {
    case 0:
      return { phrase: 'yesterday', date: shift(1), answer: formatDate(shift(1)) };
    case 1: {
      const back = ((dow + 1) % 7) + 1; // back to the previous Saturday
      return { phrase: 'last weekend', date: shift(back), answer: `the weekend before ${formatDate(session)}` };
    }
    case 2: {
      const back = rng.int(2, 5);
      return { phrase: `on ${WEEKDAYS[shift(back).getUTCDay()]}`, date: shift(back), answer: formatDate(shift(back)) };
    }
    case 3:
      return { phrase: 'last week', date: shift(7), answer: `the week before ${formatDate(session)}` };
    default:
      return { phrase: 'this morning', date: session, answer: formatDate(session) };
  }
}

// ---------------------------------------------------------------------------------------------
// Storylines: what one person says over the sessions, and the questions about it

interface Line {
  who: Person;
  text: string;
  turn?: Turn;
}

interface Draft {
  kind: QuestionKind;
  question: string;
  answer: string;
  evidence: Line[];
  superseded?: string[];
  as_of?: number;
}

/** A fact that changed in the chat (a home, a job): the turns that stated the old and the new value. */
interface Change {
  person: Person;
  what: 'home' | 'job';
  old: { value: string; lines: Line[] };
  current: { value: string; lines: Line[] };
  /** The turn after which the current value is news (the move or the notice announced): the old value held until then. */
  announced: Line;
  /** The turn that shows the new value in place, when there is one (the first week in the new city). */
  settled?: Line;
}

/** Something a person did that a "what did X do in <month>" question can name. */
interface Dated {
  person: Person;
  label: string;
  what: string;
  date: Date;
  line: Line;
}

class Story {
  readonly drafts: Draft[] = [];
  readonly dated: Dated[] = [];
  readonly changes: Change[] = [];
  readonly episodes: Array<{ session: number; lines: Line[] }> = [];
  private readonly load: number[];
  private readonly taken = new Set<unknown>();

  constructor(
    readonly rng: Rng,
    readonly speakers: Person[],
    readonly dates: Date[],
  ) {
    this.load = dates.map(() => 0);
  }

  get last(): number {
    return this.dates.length - 1;
  }

  /** A session in [lo, hi] (clamped), the least busy of three tries so facts spread out. */
  session(lo: number, hi: number): number {
    const a = Math.max(0, Math.min(lo, this.last));
    const b = Math.max(a, Math.min(hi, this.last));
    let best = this.rng.int(a, b);
    for (let i = 0; i < 2; i++) {
      const s = this.rng.int(a, b);
      if ((this.load[s] as number) < (this.load[best] as number)) best = s;
    }
    return best;
  }

  /** `count` items of `list` no one else in this conversation has had (two friends rarely share every detail). */
  fresh<T>(list: readonly T[], count: number): T[] {
    const free = this.rng.shuffle(list.filter((x) => !this.taken.has(x)));
    const out = (free.length >= count ? free : this.rng.shuffle(list)).slice(0, count);
    for (const x of out) this.taken.add(x);
    return out;
  }

  /** One item of `list` no one else in this conversation has had. */
  one<T>(list: readonly T[]): T {
    return this.fresh(list, 1)[0] as T;
  }

  other(person: Person): Person {
    return this.rng.pick(this.speakers.filter((p) => p !== person));
  }

  /** Lines said in one session, kept together; returns them for questions to cite. */
  say(session: number, ...lines: Array<[Person, string]>): Line[] {
    const out = lines.map(([who, text]) => ({ who, text }));
    this.episodes.push({ session, lines: out });
    this.load[session] = (this.load[session] as number) + out.length;
    return out;
  }

  ask(kind: QuestionKind, question: string, answer: string, ...evidence: Line[]): void {
    this.drafts.push({ kind, question, answer, evidence });
  }

  react(): string {
    return this.rng.pick(REACTIONS);
  }
}

function home(st: Story, p: Person, cities: string[]): void {
  const { rng } = st;
  const [from, to] = cities as [string, string];
  const partner = rng.pick(RELATIVES);
  const reason = rng.pick(MOVE_REASONS);
  const s1 = st.session(0, 4);
  const [lives] = st.say(s1, [p, rng.pick(CITY_LIFE)(from)], [st.other(p), rng.pick(['Ha, classic', 'Sounds about right', 'I miss that place honestly', 'At least the food is good there'])]);
  const s2 = st.session(s1 + 3, s1 + 9);
  const o = st.other(p);
  const [news, , when] = st.say(s2, [p, reason.line(to, partner)], [o, `${st.react()} ${to}?! When?`], [p, 'End of next month if everything goes to plan. I already have a mountain of boxes']);
  const s3 = st.session(s2 + 1, s2 + 3);
  const [moved] = st.say(s3, [p, rng.pick(NEW_HOME)(to)], [st.other(p), 'Yay! Send pics of the new place']);
  st.ask('single-hop', rng.pick([`Why did ${p.name} decide to relocate to ${to}?`, `What was the reason for ${p.name}'s move?`]), reason.why, news as Line);
  st.ask('multi-hop', rng.pick([`Which cities has ${p.name} lived in?`, `Where did ${p.name} live before settling in ${to}, and where after?`]), `${from}, then ${to}`, lives as Line, moved as Line);
  st.ask('temporal', rng.pick([`When did ${p.name} announce the move?`, `When did ${p.name} share the news about leaving ${from}?`]), formatDate(st.dates[s2] as Date), news as Line);
  st.ask('temporal', `When did ${p.name} settle into ${p.poss} new home in ${to}?`, `the week before ${formatDate(st.dates[s3] as Date)}`, moved as Line);
  st.ask('temporal', `When had ${p.name} planned to move to ${to}?`, `the end of the month after ${formatDate(st.dates[s2] as Date)}`, news as Line, when as Line);
  st.changes.push({ person: p, what: 'home', old: { value: from, lines: [lives as Line] }, current: { value: to, lines: [moved as Line, news as Line] }, announced: news as Line, settled: moved as Line });
}

function work(st: Story, p: Person): void {
  const { rng } = st;
  const job = st.one(JOBS);
  const next = st.one(NEW_JOBS);
  const boss = st.one(BOSSES);
  const s1 = st.session(0, 5);
  const [grind, , title] = st.say(s1, [p, job.grind], [st.other(p), rng.pick(['You deserve a medal', 'That sounds exhausting', 'How do you do it every day'])], [p, `Just another day as a ${job.title} at ${job.shop}, I guess`]);
  const s2 = st.session(s1 + 4, s1 + 11);
  const told = moment(rng, st.dates[s2] as Date);
  const [offer, , why] = st.say(
    s2,
    [p, `I handed in my notice ${told.phrase}! I'm going to be a ${next.title} at ${next.company}`],
    [st.other(p), `${st.react()} How did you decide?`],
    [p, `Mostly ${next.perk}. I love the people here but I was burning out`],
  );
  const s3 = st.session(s2 + 2, s2 + 6);
  const [manager] = st.say(s3, [p, `Two weeks in at the new place. My manager ${boss} is lovely, but the coffee machine is a crime`], [st.other(p), 'Haha a good boss is worth bad coffee']);
  st.ask('single-hop', rng.pick([`What new position did ${p.name} accept?`, `What role is ${p.name} taking on at ${next.company}?`]), `${next.title} at ${next.company}`, offer as Line);
  st.ask('single-hop', rng.pick([`Who is ${p.name}'s manager at the new job?`, `What is the name of ${p.name}'s new boss?`]), boss, manager as Line);
  st.ask('single-hop', `What was the main reason ${p.name} changed jobs?`, next.perk, why as Line);
  st.ask('multi-hop', rng.pick([`What did ${p.name} do for a living before joining ${next.company}?`, `What jobs has ${p.name} had?`]), `${job.title} at ${job.shop}, then ${next.title} at ${next.company}`, grind as Line, offer as Line);
  st.ask('temporal', rng.pick([`When did ${p.name} resign from ${p.poss} old job?`, `When did ${p.name} quit to go to ${next.company}?`]), told.answer, offer as Line);
  st.changes.push({ person: p, what: 'job', old: { value: `${job.title} at ${job.shop}`, lines: [title as Line] }, current: { value: `${next.title} at ${next.company}`, lines: [offer as Line] }, announced: offer as Line });
}

function pet(st: Story, p: Person): Pet['kind'] {
  const { rng } = st;
  const animal = rng.pick(PETS);
  const breed = st.one(animal.breeds);
  const name = st.one(PET_NAMES);
  const age = rng.pick(PET_AGES);
  const [subj, obj] = rng.chance(0.5) ? ['she', 'her'] : ['he', 'him'];
  const s1 = st.session(1, 12);
  const got = moment(rng, st.dates[s1] as Date);
  const o = st.other(p);
  const [adopt, , detail] = st.say(
    s1,
    [p, rng.pick([`We have a new family member! Meet ${name}, a ${breed} from the rescue`, `${cap(got.phrase)} we brought home a little ${breed}. ${cap(subj)}'s called ${name}`])],
    [o, rng.pick([`Stop it, ${name}! How old is ${obj}?`, `${st.react()} I need photos immediately. How old?`])],
    [p, `${cap(age)}. ${cap(subj)} already chewed through a phone charger and a shoe`],
  );
  const antic = rng.pick(animal.antics);
  const s2 = st.session(s1 + 2, s1 + 10);
  const [mischief] = st.say(s2, [p, antic(name, subj)], [st.other(p), rng.pick(['Hahaha I love this animal', `${name} is my hero`, 'Chaos, as expected'])]);
  const young = animal.young;
  st.ask('single-hop', rng.pick([`What did ${p.name} name the ${young}?`, `What is the name of ${p.name}'s ${animal.kind}?`]), name, adopt as Line);
  st.ask('single-hop', rng.pick([`What breed is ${p.name}'s ${animal.kind}?`, `What kind of ${animal.kind} did ${p.name} adopt?`]), breed, adopt as Line);
  st.ask('multi-hop', `How old was ${name} when ${p.name} brought ${obj} home?`, age, adopt as Line, detail as Line);
  st.ask('temporal', rng.pick([`When did ${p.name} adopt ${name}?`, `When did ${name} join ${p.name}'s household?`]), got.answer, adopt as Line);
  st.ask('single-hop', `What mischief did ${name} get up to?`, antic(name, subj), mischief as Line);
  st.dated.push({ person: p, label: 'adopt', what: `adopted ${name}`, date: got.date, line: adopt as Line });
  return animal.kind;
}

function trips(st: Story, p: Person, count: number): void {
  const { rng } = st;
  const picks = st.fresh(TRIPS, count);
  let from = 0;
  const backs: Line[] = [];
  for (const trip of picks) {
    const companion = rng.pick(COMPANIONS);
    const s1 = st.session(from, from + 6);
    const s2 = st.session(s1 + 1, s1 + 4);
    from = s2 + 1;
    const [plan] = st.say(s1, [p, `Booked flights to ${trip.place}! Going with ${companion}, we've talked about it for years`], [st.other(p), rng.pick(['Jealous!!', 'Ahh you’ll love it', 'Bring me back something'])]);
    const when = moment(rng, st.dates[s2] as Date);
    const o = st.other(p);
    const [back, , food] = st.say(
      s2,
      [p, `Back from ${trip.place}! ${cap(when.phrase)} we ${trip.landmark}`],
      [o, rng.pick(['Ok but how was the food', 'Sounds incredible. Best thing you ate?'])],
      [p, `Oh the food. ${cap(trip.food)}`],
    );
    backs.push(back as Line);
    st.ask('single-hop', rng.pick([`Who did ${p.name} travel to ${trip.place} with?`, `Who went on the ${trip.place} trip with ${p.name}?`]), companion.replace('my ', `${p.poss} `), plan as Line);
    st.ask('single-hop', rng.pick([`What food did ${p.name} rave about after visiting ${trip.place}?`, `What was the best thing ${p.name} ate on holiday in ${trip.country}?`]), trip.food, back as Line, food as Line);
    st.dated.push({ person: p, label: 'trip', what: `a trip to ${trip.place}`, date: when.date, line: back as Line });
  }
  if (backs.length > 1) st.ask('multi-hop', rng.pick([`Which places has ${p.name} travelled to?`, `Name the trips ${p.name} has taken.`]), picks.map((t) => t.place).join(', '), ...backs);
}

function hobbies(st: Story, p: Person, count: number): void {
  const { rng } = st;
  const picks = st.fresh(HOBBIES, count);
  const starts: Line[] = [];
  for (const hobby of picks) {
    const s1 = st.session(0, st.last - 8);
    const [start, , when] = st.say(s1, [p, hobby.start], [st.other(p), rng.pick(['Ooh how often?', 'Look at you! When is it?', 'Fun! Is it every week?'])], [p, hobby.when]);
    const s2 = st.session(s1 + 2, s1 + 7);
    const [progress] = st.say(s2, [p, hobby.progress], [st.other(p), rng.pick(['So proud of you', 'Told you you’d be good at it', 'Wow, already!'])]);
    const s3 = st.session(s2 + 1, s2 + 6);
    const day = moment(rng, st.dates[s3] as Date);
    const [event] = st.say(s3, [p, `${cap(day.phrase)} was ${hobby.event}`], [st.other(p), st.react()]);
    starts.push(start as Line);
    st.ask('single-hop', fill(hobby.ask, p), hobby.start, start as Line);
    st.ask('single-hop', `When does ${p.name} usually ${hobby.habit}?`, hobby.when, start as Line, when as Line);
    st.ask('open-domain', fill(hobby.od.question, p), fill(hobby.od.answer, p), start as Line, progress as Line);
    st.ask('temporal', `When did ${p.name} ${hobby.eventAsk}?`, day.answer, event as Line);
    st.dated.push({ person: p, label: 'hobby', what: hobby.eventAsk, date: day.date, line: event as Line });
  }
  if (starts.length > 1) st.ask('multi-hop', rng.pick([`What hobbies has ${p.name} picked up?`, `What new pastimes has ${p.name} started?`]), 'both hobbies', ...starts);
}

function family(st: Story, p: Person): void {
  const { rng } = st;
  const brother = st.one(BROTHERS);
  const sister = st.one(SISTERS);
  const fiance = rng.pick(RELATIVES.filter((r) => r !== brother));
  const s1 = st.session(0, st.last - 6);
  switch (rng.int(0, 2)) {
    case 0: {
      const [news] = st.say(s1, [p, `My brother ${brother} proposed to ${fiance} at the lake and it's a yes!`], [st.other(p), `${st.react()} Tell ${brother} congrats from me`]);
      const s2 = st.session(s1 + 4, s1 + 10);
      const day = moment(rng, st.dates[s2] as Date);
      const [wedding] = st.say(s2, [p, `The wedding was ${day.phrase}, I cried through my whole speech`], [st.other(p), 'Of course you did. Was the food good at least?'], [p, 'Amazing. And the band played until 1am']);
      st.ask('single-hop', rng.pick([`Who is ${p.name}'s brother engaged to?`, `Who did ${brother} propose to?`]), fiance, news as Line);
      st.ask('temporal', rng.pick([`When did ${p.name}'s brother get married?`, `When was ${brother}'s wedding?`]), day.answer, wedding as Line);
      st.ask('multi-hop', `How long after the proposal did ${brother} and ${fiance} get married?`, `${Math.round((day.date.getTime() - (st.dates[s1] as Date).getTime()) / (30 * DAY))} months`, news as Line, wedding as Line);
      st.dated.push({ person: p, label: 'wedding', what: `went to ${p.poss} brother's wedding`, date: day.date, line: wedding as Line });
      break;
    }
    case 1: {
      const day = moment(rng, st.dates[s1] as Date);
      const baby = rng.pick(['Ada', 'Rosie', 'Nell', 'Elodie', 'June']);
      const [born, , weight] = st.say(s1, [p, `I'm an ${p.subj === 'she' ? 'aunt' : 'uncle'} now!! My sister ${sister} had a little girl ${day.phrase}, they named her ${baby}`], [st.other(p), 'Congratulations!! How are they doing?'], [p, 'Both healthy, she was 3.4 kilos and has a full head of hair']);
      const s2 = st.session(s1 + 3, s1 + 9);
      const [visit] = st.say(s2, [p, `Babysat ${baby} for the first time, she only screamed for forty minutes`], [st.other(p), 'A success then!']);
      st.ask('single-hop', rng.pick([`What is the name of ${p.name}'s niece?`, `What did ${sister} call her daughter?`]), baby, born as Line);
      st.ask('temporal', rng.pick([`When was ${p.name}'s niece born?`, `When did ${sister} give birth?`]), day.answer, born as Line);
      st.ask('multi-hop', `How much did ${baby} weigh at birth?`, '3.4 kilos', born as Line, weight as Line);
      st.ask('single-hop', `How did ${p.name}'s first time looking after the baby go?`, 'she screamed for forty minutes, a success', visit as Line);
      break;
    }
    default: {
      const day = moment(rng, st.dates[s1] as Date);
      const [op] = st.say(s1, [p, `Mum had her knee replaced ${day.phrase}, she's already bossing the nurses around`], [st.other(p), 'Haha that’s your mum. Send her my love']);
      const s2 = st.session(s1 + 2, s1 + 8);
      const [walk] = st.say(s2, [p, 'Mum walked to the end of the street and back today without her stick!'], [st.other(p), 'That’s huge!']);
      st.ask('single-hop', rng.pick([`What operation did ${p.name}'s mother have?`, `What surgery did ${p.name}'s mum go through?`]), 'a knee replacement', op as Line);
      st.ask('temporal', `When did ${p.name}'s mother have surgery?`, day.answer, op as Line);
      st.ask('multi-hop', `How was ${p.name}'s mother recovering after the operation?`, 'she walked to the end of the street without her stick', op as Line, walk as Line);
      st.dated.push({ person: p, label: 'surgery', what: `${p.poss} mother had knee surgery`, date: day.date, line: op as Line });
    }
  }
}

function purchases(st: Story, p: Person, count: number): void {
  const { rng } = st;
  for (const item of st.fresh(PURCHASES, count)) {
    const s = st.session(0, st.last);
    const [bought] = st.say(s, [p, item.line], [st.other(p), rng.pick(['Treat yourself!', 'Ooh fancy', 'About time honestly'])]);
    st.ask('single-hop', rng.pick([`What did ${p.name} buy to replace ${p.poss} old ${item.old}?`, `What new ${item.old} did ${p.name} get?`]), item.what, bought as Line);
    st.dated.push({ person: p, label: 'purchase', what: item.what, date: st.dates[s] as Date, line: bought as Line });
  }
}

function injury(st: Story, p: Person): void {
  const { rng } = st;
  const hurt = st.one(INJURIES);
  const sport = st.one(SPORTS);
  const s1 = st.session(1, st.last - 3);
  const day = moment(rng, st.dates[s1] as Date);
  const [line] = st.say(s1, [p, hurt.line(day.phrase, sport)], [st.other(p), 'Oh no!! Does it hurt a lot?'], [p, 'Only when I laugh. Or move']);
  const s2 = st.session(s1 + 2, s1 + 5);
  const [healed] = st.say(s2, [p, hurt.healed], [st.other(p), 'Finally! Celebrate carefully']);
  st.ask('single-hop', rng.pick([`How did ${p.name} get injured?`, `What was ${p.name} doing when ${p.subj} got hurt?`]), `playing ${sport}`, line as Line);
  st.ask('temporal', rng.pick([`When did ${p.name} hurt ${p.poss} ${hurt.part}?`, `When was ${p.name}'s ${hurt.what}?`]), day.answer, line as Line);
  const weeks = Math.max(1, Math.round(((st.dates[s2] as Date).getTime() - day.date.getTime()) / (7 * DAY)));
  st.ask('temporal', `How long did it take ${p.name} to recover from the ${hurt.what}?`, `about ${weeks} weeks`, line as Line, healed as Line);
}

function tastes(st: Story, p: Person, count: number, pet: Pet['kind'] | null): void {
  const { rng } = st;
  for (const taste of st.fresh(TASTES.filter((t) => t.noPet !== pet), count)) {
    const s1 = st.session(0, st.last - 4);
    const [first] = st.say(s1, [p, taste.lines[0]], [st.other(p), rng.pick(['Haha fair', 'I get that', 'Honestly respect'])]);
    const s2 = st.session(s1 + 3, st.last);
    const [second] = st.say(s2, [p, taste.lines[1]], [st.other(p), rng.pick(['Very you', 'Ha, of course', 'Sounds right'])]);
    st.ask('open-domain', fill(taste.question, p), fill(taste.answer, p), first as Line, second as Line);
  }
}

/** "What did X do in <month year>?" for dated events alone in their month for that person. */
function monthQuestions(st: Story): void {
  const { rng } = st;
  for (const d of st.dated) {
    const same = st.dated.filter((e) => e.person === d.person && monthYear(e.date) === monthYear(d.date));
    if (same.length !== 1 || !rng.chance(0.6)) continue;
    const question =
      d.label === 'trip'
        ? `Where did ${d.person.name} go on holiday in ${monthYear(d.date)}?`
        : d.label === 'purchase'
          ? `What did ${d.person.name} buy in ${monthYear(d.date)}?`
          : `What happened in ${d.person.name}'s life in ${monthYear(d.date)}?`;
    st.ask('temporal', question, d.what, d.line);
  }
}

// ---------------------------------------------------------------------------------------------
// Sessions

function smallTalk(rng: Rng, speakers: Person[], used: Set<string>): Line[] {
  // One variant index for all lines of an exchange, so replies answer their question; an opening
  // already used in this conversation is avoided for as long as a few draws allow.
  let template = rng.pick(SMALL_TALK);
  let variant = rng.int(0, (template[0] as string[]).length - 1);
  for (let tries = 0; tries < 8 && used.has(`${SMALL_TALK.indexOf(template)}:${variant}`); tries++) {
    template = rng.pick(SMALL_TALK);
    variant = rng.int(0, (template[0] as string[]).length - 1);
  }
  used.add(`${SMALL_TALK.indexOf(template)}:${variant}`);
  let who = rng.pick(speakers);
  return template.map((options) => {
    const text = (options[variant % options.length] as string).replace('{food}', rng.pick(FOODS)).replace('{show}', rng.pick(SHOWS)).replace('{day}', rng.pick(WEEKDAYS));
    const line = { who, text };
    who = rng.pick(speakers.filter((p) => p !== who));
    return line;
  });
}

function exchange(rng: Rng, pair: [string, string], speakers: Person[]): Line[] {
  const a = rng.pick(speakers);
  const b = rng.pick(speakers.filter((p) => p !== a));
  return [
    { who: a, text: pair[0].replace('{day}', rng.pick(WEEKDAYS)) },
    { who: b, text: pair[1].replace('{day}', rng.pick(WEEKDAYS)) },
  ];
}

function conversation(rng: Rng, index: number, names: Person[], cities: string[]): { conversation: Conversation; drafts: Draft[]; changes: Change[] } {
  const id = `conv-${index + 1}`;
  const speakers = names;
  const sessionCount = rng.int(18, 22);
  const dates: Date[] = [];
  let t = Date.UTC(2022 + rng.int(0, 1), rng.int(0, 11), rng.int(1, 28), rng.int(8, 21), rng.int(0, 59));
  for (let s = 0; s < sessionCount; s++) {
    dates.push(new Date(t));
    t += rng.int(6, 24) * DAY + rng.int(-5, 5) * 3_600_000;
  }
  const st = new Story(rng, speakers, dates);
  speakers.forEach((p, i) => {
    const third = i === 2;
    if (!third || rng.chance(0.5)) home(st, p, [cities[2 * i] as string, cities[2 * i + 1] as string]);
    if (!third || rng.chance(0.5)) work(st, p);
    const animal = rng.chance(third ? 0.4 : 0.8) ? pet(st, p) : null;
    trips(st, p, third ? 1 : rng.int(1, 2));
    hobbies(st, p, third ? 1 : rng.int(1, 2));
    if (!third || rng.chance(0.5)) family(st, p);
    purchases(st, p, third ? 1 : rng.int(1, 2));
    if (rng.chance(third ? 0.3 : 0.6)) injury(st, p);
    tastes(st, p, third ? 1 : rng.int(2, 3), animal);
  });
  monthQuestions(st);

  const used = new Set<string>();
  const sessions: Session[] = dates.map((date, s) => {
    const blocks: Line[][] = st.episodes.filter((e) => e.session === s).map((e) => e.lines);
    const target = rng.int(25, 35);
    let size = blocks.reduce((n, b) => n + b.length, 0) + 4;
    while (size < target) {
      const talk = smallTalk(rng, speakers, used);
      blocks.push(talk);
      size += talk.length;
    }
    const lines = [...exchange(rng, rng.pick(OPENERS), speakers), ...rng.shuffle(blocks).flat(), ...exchange(rng, rng.pick(CLOSERS), speakers)];
    let time = Math.floor(date.getTime() / 1000);
    const turns = lines.map((line, n) => {
      const turn: Turn = { id: `${id}:s${s + 1}:t${n + 1}`, speaker: line.who.name, text: line.text, time };
      line.turn = turn;
      time += rng.int(20, 150);
      return turn;
    });
    return { index: s + 1, date: date.toISOString(), turns };
  });
  return { conversation: { id, speakers: speakers.map((p) => p.name), sessions }, drafts: st.drafts, changes: st.changes };
}

// ---------------------------------------------------------------------------------------------
// Questions about facts that changed

/** Phrasings of the questions about a change; `{P}` the person, `{new}` the new city or employer, `{when}` "in <month>" or "on <date>". */
const CHANGE_ASKS: Record<Change['what'], { now: string[]; before: string[]; asOf: string[] }> = {
  home: {
    now: ['Where does {P} live now?', 'Which city is {P} living in these days?', 'Where is {P} based at the moment?', 'What city does {P} call home now?'],
    before: ['Where did {P} live before {new}?', 'Which city did {P} leave to move to {new}?', 'Where was {P} living before the move to {new}?'],
    asOf: ['Where did {P} live {when}?', 'Which city was {P} living in back {when}?', 'Where was {P} living {when}?'],
  },
  job: {
    now: ["What is {P}'s job now?", 'What does {P} do for work these days?', 'Where does {P} work now, and as what?', "What's {P}'s current job?"],
    before: ['What did {P} do before starting at {new}?', "What was {P}'s old job?", 'Which job did {P} leave for {new}?'],
    asOf: ["What was {P}'s job {when}?", 'What did {P} do for a living back {when}?', 'Where was {P} working {when}?'],
  },
};

/**
 * Knowledge-update and as-of questions about the homes and jobs that changed, drawn after
 * everything else with their own generator, so the conversations and the other questions are
 * those of the same seed without them. Per change: the value now (evidence the turns that state
 * it, `superseded` those that stated the old one), the value before (the old turns), and the value
 * at a time while the old one held (`as_of` between the turn that stated it and the news of the
 * change; named by month, or by date when the month is the change's own).
 */
function changeQuestions(rng: Rng, changes: Change[]): Draft[] {
  const drafts: Draft[] = [];
  const ids = (lines: Line[]): string[] => lines.map((l) => (l.turn as Turn).id);
  for (const c of changes) {
    const asks = CHANGE_ASKS[c.what];
    const short = c.what === 'home' ? c.current.value : (c.current.value.split(' at ')[1] as string);
    const fillChange = (template: string, when = ''): string => template.replaceAll('{P}', c.person.name).replaceAll('{new}', short).replaceAll('{when}', when);
    drafts.push({ kind: 'knowledge-update', question: fillChange(rng.pick(asks.now)), answer: c.current.value, evidence: c.current.lines, superseded: ids(c.old.lines) });
    drafts.push({ kind: 'knowledge-update', question: fillChange(rng.pick(asks.before)), answer: c.old.value, evidence: c.old.lines });
    const from = Math.max(...c.old.lines.map((l) => (l.turn as Turn).time));
    const until = (c.announced.turn as Turn).time;
    const at = from + Math.floor(rng.float() * (until - from));
    const date = new Date(at * 1000);
    const when = monthYear(date) === monthYear(new Date(until * 1000)) ? `on ${formatDate(date)}` : `in ${monthYear(date)}`;
    drafts.push({ kind: 'as-of', question: fillChange(rng.pick(asks.asOf), when), answer: c.old.value, evidence: c.old.lines, as_of: at });
  }
  return drafts;
}

/**
 * The facts track of a change: the old and the new value as the person would tell an assistant,
 * at the times they became true, and the change's three questions asked again of the person's
 * own memories, the fact holding the answer among the evidence.
 */
function changeFacts(conversation: string, c: Change, questions: Question[], next: () => string): { facts: Fact[]; questions: Question[] } {
  const owner = `${conversation}/${c.person.name}`;
  const at = (lines: Line[]): number => Math.max(...lines.map((l) => (l.turn as Turn).time));
  const text =
    c.what === 'home'
      ? { old: `I live in ${c.old.value}.`, current: `I moved to ${c.current.value}.` }
      : { old: `I work as ${article(c.old.value)} ${c.old.value}.`, current: `I now work as ${article(c.current.value)} ${c.current.value}.` };
  const old: Fact = { id: `${owner}:${c.what}:old`, owner, conversation, speaker: c.person.name, time: at(c.old.lines), text: text.old };
  const current: Fact = { id: `${owner}:${c.what}:new`, owner, conversation, speaker: c.person.name, time: (c.announced.turn as Turn).time, text: text.current };
  const [now, before, asOf] = questions as [Question, Question, Question];
  // asked of the person's own memories, as a user asks their assistant (mem0's "What are my …?")
  const mine = (q: Question): Question => ({ ...q, id: next(), owner, question: firstPerson(q.question, c.person.name) });
  return {
    facts: [old, current],
    questions: [
      { ...mine(now), evidence: [current.id, ...now.evidence], superseded: [old.id, ...(now.superseded ?? [])] },
      { ...mine(before), evidence: [old.id, ...before.evidence], include_superseded: true },
      { ...mine(asOf), evidence: [old.id, ...asOf.evidence] },
    ],
  };
}

/** A question about `name` as they would ask it about themselves: "Where does Kenji live now?" → "Where do I live now?". */
function firstPerson(question: string, name: string): string {
  return question
    .replaceAll(`${name}'s`, 'my')
    .replace(new RegExp(`\\bdoes ${name}\\b`, 'g'), 'do I')
    .replace(new RegExp(`\\bis ${name}\\b`, 'g'), 'am I')
    .replaceAll(name, 'I');
}

/** "an" before a vowel, "a" otherwise. */
function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

function person(name: string, woman: boolean): Person {
  return woman ? { name, subj: 'she', obj: 'her', poss: 'her' } : { name, subj: 'he', obj: 'him', poss: 'his' };
}

/** The dataset for a seed: `conversations` chats, the questions about them, in a fixed order. */
export function generateDataset(seed: number, conversations = 10): Dataset {
  const rng = new Rng(seed);
  const people = rng.shuffle([...WOMEN.map((n) => person(n, true)), ...MEN.map((n) => person(n, false))]);
  const out: Conversation[] = [];
  const questions: Question[] = [];
  const changed: Array<{ conversation: string; changes: Change[]; asked: number }> = [];
  let next = 0;
  for (let c = 0; c < conversations; c++) {
    // every third conversation is a group of three
    const size = c % 3 === 2 ? 3 : 2;
    const speakers = Array.from({ length: size }, () => people[next++ % people.length] as Person);
    const { conversation: conv, drafts, changes } = conversation(rng, c, speakers, rng.shuffle(CITIES));
    out.push(conv);
    changed.push({ conversation: conv.id, changes, asked: drafts.length });
    drafts.forEach((d, i) => {
      questions.push({
        id: `${conv.id}:q${i + 1}`,
        conversation: conv.id,
        kind: d.kind,
        question: d.question,
        answer: d.answer,
        evidence: d.evidence.map((line) => (line.turn as Turn).id),
      });
    });
  }
  // after every other question, with a generator of their own: what came before stays as it was
  const updates = new Rng(seed + CHANGE_SEED_OFFSET);
  const facts: Fact[] = [];
  const tracked: Question[] = [];
  for (const { conversation: id, changes, asked } of changed) {
    const start = questions.length;
    changeQuestions(updates, changes).forEach((d, i) => {
      questions.push({
        id: `${id}:q${asked + i + 1}`,
        conversation: id,
        kind: d.kind,
        question: d.question,
        answer: d.answer,
        evidence: d.evidence.map((line) => (line.turn as Turn).id),
        ...(d.superseded ? { superseded: d.superseded } : {}),
        ...(d.as_of !== undefined ? { as_of: d.as_of } : {}),
      });
    });
    // the facts track draws nothing at random: its questions are these, asked of each person
    let n = asked + changes.length * 3;
    changes.forEach((c, i) => {
      const track = changeFacts(id, c, questions.slice(start + i * 3, start + i * 3 + 3), () => `${id}:q${++n}`);
      facts.push(...track.facts);
      tracked.push(...track.questions);
    });
  }
  questions.push(...tracked);
  return { seed, conversations: out, questions, facts };
}
