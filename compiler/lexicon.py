"""The give-away lexicon of the languages besides English that a task may declare (`language de`).

A task written in German is checked for give-aways in German: its text must not name a target
("Kiste", "Fass") together with a defect ("schwebt", "in der Luft").  This module holds, for each
supported language, what the English matcher takes from the taxonomy and the object names:

* `terms`: per taxonomy category, the defect words a sentence would use (the categories' and
  their operators' `defect_terms`, translated by concept, not word for word);
* `materials`: material words, which count only beside the name, as in English (`ADJACENT`);
* `nouns`: per English head noun of the standard prefabs' names and synonyms, the nouns of the
  language that name the same thing.

Entries are written lower-case and without accents, as `giveaway.foreign_words` reads text
("über" -> "uber", "ß" -> "ss").  A single entry is a stem: it matches words that begin with it
("schweb" matches "schwebt", "schwebende"); in German, whose compounds glue nouns together, a stem
of four letters or more also matches inside a word ("holzkiste", "freischwebend").  A stem of
three letters or fewer matches only the whole word.  An entry of several words is a phrase
matched word by word.

Coverage, honestly: every category has terms in every language (a test holds this), but they are
the common ways to say each defect, some 8-20 per category, not every synonym; the nouns cover the
standard library's prefabs.  A target the nouns do not cover is refused for a task that declares
the language (E544), unless its scene is written in that language or a synonym of it is a word of
that language: the check never passes quietly for want of a word.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lexicon:
    code: str
    compounds: bool  # stems also match inside words (German compounds)
    terms: dict[str, tuple[str, ...]]  # taxonomy category id -> defect stems and phrases
    materials: dict[str, tuple[str, ...]]  # English material word -> stems (count beside the name)
    nouns: dict[str, tuple[str, ...]]  # English head noun -> nouns of the language


def _split(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


def _table(text: str) -> dict[str, tuple[str, ...]]:
    """`key: a, b, c` lines."""
    out = {}
    for line in text.strip().splitlines():
        key, _, vals = line.partition(":")
        out[key.strip()] = _split(vals)
    return out


GERMAN = Lexicon(
    "de",
    compounds=True,
    terms=_table("""
        missing_support: schweb, in der luft, frei in der luft, uber dem boden, lucke, ohne stutze, unterstutzt, beruhrt nicht, ohne halt, levitier
        intersection: durchdring, uberlapp, ineinander, steckt in, ragt in, verschmolz, verschmelz, clipping, schneiden sich, durchschneid
        scale: zu gross, zu klein, riesig, winzig, gestaucht, gestreckt, unproportion, uberdimension, ubergross, verzerrt, massstab, falsche grosse
        missing_collision: durchlauf, durchgeh, durchschreit, hindurch, durch ihn, durch sie, durch es, keine kollision, kollisionslos, nicht blockiert, durchlassig
        unexpected_collision: blockier, unsichtbare wand, unsichtbare mauer, unsichtbare barriere, unsichtbares hindernis, kommt nicht durch, versperr, hangen bleib, steckt fest
        abnormal_trajectory: umgekippt, kippt um, uberschlag, geschleudert, schleuder, fliegt, flog, prallt, abgeprallt, katapult, zu weit, heftig, auf dem kopf
        visibility: durchsichtig, durchschein, sieht man durch, durch die wand, verschwind, taucht wieder auf, unsichtbar, rontgen
        view_dependent: wachst, wuchs, schrumpf, andert seine grosse, andert die form, andert seine farbe, mit der entfernung, aus der nahe, von nahem, aus der ferne, ploppt
        shadow_lighting: schatten, leucht, gluh, beleucht, unbeleucht, kein licht, spendet kein licht, strahlt
        material: material, textur, oberflache, falsches material, aus holz, aus stein, aus glas, aus metall
        existence: verschwund, fehlt, fehlend, nicht mehr da, aufgetaucht, taucht auf, erschien, erscheint, wieder da, ist weg
        static_attribute: verschob, verschieb, gedreht, verandert, woanders, an anderer stelle, versetzt, umgestellt, bewegt
        operational_state: flacker, plotzlich, abrupt, eingefror, steht still, zu schnell, springt, verzoger, reagiert nicht, schaltet, blink
        improper_configuration: kopfuber, auf dem kopf, umgedreht, verkehrt herum, falsch herum, zur wand, schief, geneigt, unbrauchbar, falsch platziert
        historical: anachron, modern, unzeitgemass, passt nicht in, gehort nicht, falsche epoche, aus einer anderen zeit, aus der zukunft
    """),
    materials=_table("""
        wood: holz, holzern
        metal: metall, eisern, stahl
        stone: stein, steinern
        glass: glas, glasern
        fabric: stoff
        plastic: plastik, kunststoff
        brick: ziegel, backstein
        concrete: beton
        transparent: durchsichtig, transparent
        opaque: undurchsichtig
    """),
    nouns=_table("""
        chair: stuhl, sessel
        seat: sitz
        stool: hocker, schemel
        table: tisch
        desk: schreibtisch, pult
        bench: bank
        workbench: werkbank
        sofa: sofa, couch
        couch: couch, sofa
        settee: sofa
        bed: bett, beet
        bookshelf: bucherregal, regal
        bookcase: bucherregal, regal
        shelf: regal, brett
        shelves: regal
        shelving: regal
        rack: gestell, regal
        cabinet: schrank
        cupboard: schrank
        sideboard: anrichte, sideboard
        stand: stander, gestell
        television: fernseh
        tv: fernseh
        screen: bildschirm
        lamp: lampe, leuchte
        light: lampe, leuchte, laterne
        plant: pflanze
        houseplant: zimmerpflanze, pflanze
        bottle: flasche
        drink: getrank
        wall: wand, mauer
        door: tur, pforte
        doorway: tur, eingang
        window: fenster
        windowpane: fensterscheibe, scheibe
        column: saule
        pillar: pfeiler, saule
        post: pfosten, pfahl
        fence: zaun
        railing: gelander
        well: brunnen
        pond: teich, weiher
        pool: becken, teich
        water: wasser
        barrel: fass, tonne
        cask: fass
        keg: fass, fasschen
        sack: sack, sacke
        bag: beutel, tasche, sack
        crate: kiste
        box: kiste, kasten, schachtel
        basket: korb
        bale: ballen
        hay: heu
        bin: tonne, mulleimer, eimer
        can: dose, tonne
        dumpster: container, mulltonne
        skip: container, mulde
        container: container, behalter
        drum: fass, tonne
        pallet: palette
        skid: palette
        lantern: laterne
        torch: fackel
        brazier: feuerschale
        lamppost: laterne
        streetlight: strassenlaterne, laterne
        mailbox: briefkasten
        postbox: briefkasten
        letterbox: briefkasten
        bollard: poller
        cone: kegel, leitkegel, hutchen
        pylon: leitkegel
        bumper: puffer, radstopper
        stop: stopper
        buffer: puffer
        poster: plakat, poster
        board: tafel, brett
        billboard: plakatwand
        sign: schild
        signpost: wegweiser
        fingerpost: wegweiser
        hydrant: hydrant
        stall: stand, bude
        booth: bude, stand
        cart: karren, wagen
        handcart: handkarren
        wagon: wagen, karren
        car: auto, wagen
        automobile: auto
        vehicle: fahrzeug
        hatchback: auto
        forklift: gabelstapler, stapler
        truck: lastwagen, lkw, stapler
        pipe: rohr
        pipeline: rohrleitung, rohr
        tube: rohr, rohre
        windmill: windmuhle, muhle
        mill: muhle
        pump: pumpe
        fan: ventilator, lufter
        tree: baum
        oak: eiche
        pine: kiefer, pinie
        fir: tanne
        conifer: nadelbaum
        bush: busch, strauch
        shrub: strauch
        hedge: hecke
        boulder: fels, findling
        rock: fels, stein
        stone: stein
        pebble: kiesel
        log: baumstamm, stamm
        trunk: stamm
        timber: holz
        stump: stumpf, baumstumpf
        flowerbed: blumenbeet, beet
        planter: pflanzkubel
        flower: blume
        reed: schilf
        rush: binse
        cattail: rohrkolben
    """),
)

FRENCH = Lexicon(
    "fr",
    compounds=False,
    terms=_table("""
        missing_support: flott, en l air, dans les airs, suspendu, en suspension, levit, sans support, sans appui, au dessus du sol, ne touche pas, decolle, ecart
        intersection: interpenetr, chevauch, se traversent, l un dans l autre, imbriqu, fusionn, encastr, enfonce dans, se croisent
        scale: trop grand, trop petit, trop gros, enorme, minuscule, gigantesque, ecrase, etire, disproportion, surdimension, mauvaise taille, echelle
        missing_collision: traverser, passer a travers, passe a travers, a travers lui, a travers elle, sans collision, pas de collision, ne bloque pas, traversable
        unexpected_collision: bloqu, mur invisible, barriere invisible, obstacle invisible, impossible de passer, coince, obstru
        abnormal_trajectory: renverse, bascul, projete, catapult, rebond, s envole, trop loin, violemment, propuls, a l envers
        visibility: voir a travers, visible a travers, transparaitre, dispara, reappara, invisible, rayons x
        view_dependent: grandit, rapetiss, change de taille, change de forme, change de couleur, avec la distance, de pres, de loin
        shadow_lighting: ombre, lumineu, brill, eclaire, lueur, luit, n eclaire pas
        material: materiau, matiere, texture, surface, mauvais materiau, en bois, en pierre, en verre, en metal
        existence: disparu, manquant, absent, apparu, apparait, revenu, n est plus la, reapparu
        static_attribute: deplac, tourne, pivote, change, ailleurs, autre position, modifie, bouge
        operational_state: clignot, vacill, brusque, soudain, fige, trop vite, saute, retard, ne repond pas, allume et eteint
        improper_configuration: a l envers, renverse, inverse, face au mur, tourne vers le mur, mal place, penche, incline, inutilisable, sens dessus dessous
        historical: anachron, modern, hors d epoque, n a pas sa place, mauvaise epoque, d une autre epoque, du futur
    """),
    materials=_table("""
        wood: bois
        metal: metal, metallique, fer, acier
        stone: pierre
        glass: verre
        fabric: tissu
        plastic: plastique
        brick: brique
        concrete: beton
        transparent: transparent
        opaque: opaque
    """),
    nouns=_table("""
        chair: chaise, fauteuil
        seat: siege
        stool: tabouret
        table: table
        desk: bureau, pupitre
        bench: banc
        workbench: etabli
        sofa: canape, sofa
        couch: canape
        settee: canape
        bed: lit, parterre
        bookshelf: bibliotheque, etagere
        bookcase: bibliotheque
        shelf: etagere
        shelves: etagere
        shelving: etagere, rayonnage
        rack: etagere, rayonnage
        cabinet: meuble, armoire, placard
        cupboard: placard, armoire
        sideboard: buffet, meuble tv
        stand: support, stand
        television: televiseur, television, tele
        tv: televiseur, television, tele
        screen: ecran
        lamp: lampe
        light: lampe, lampadaire, lanterne
        plant: plante
        houseplant: plante
        bottle: bouteille
        drink: boisson
        wall: mur, muret
        door: porte
        doorway: porte, entree
        window: fenetre
        windowpane: vitre, carreau
        column: colonne
        pillar: pilier, colonne
        post: poteau, piquet
        fence: cloture, barriere
        railing: rambarde, balustrade
        well: puits
        pond: etang, mare, bassin
        pool: bassin, piscine
        water: eau
        barrel: tonneau, baril, fut
        cask: tonneau, fut
        keg: fut, tonnelet
        sack: sac
        bag: sac
        crate: caisse, cageot
        box: boite, caisse, carton
        basket: panier, corbeille
        bale: botte, balle
        hay: foin
        bin: poubelle
        can: poubelle, bidon
        dumpster: benne
        skip: benne
        container: conteneur, benne
        drum: fut, baril, bidon
        pallet: palette
        skid: palette
        lantern: lanterne
        torch: torche, flambeau
        brazier: brasero
        lamppost: lampadaire, reverbere
        streetlight: lampadaire, reverbere
        mailbox: boite aux lettres
        postbox: boite aux lettres
        letterbox: boite aux lettres
        bollard: borne, potelet
        cone: cone, plot
        pylon: plot, cone
        bumper: butee, butoir
        stop: butee
        buffer: butoir
        poster: affiche, panneau
        board: panneau, tableau
        billboard: panneau
        sign: panneau, enseigne
        signpost: poteau indicateur, panneau
        fingerpost: poteau indicateur
        hydrant: borne incendie, bouche incendie
        stall: etal, echoppe, stand
        booth: stand, echoppe
        cart: charrette, chariot
        handcart: charrette
        wagon: chariot, charrette
        car: voiture, auto
        automobile: automobile, voiture
        vehicle: vehicule
        hatchback: voiture
        forklift: chariot elevateur, chariot, elevateur
        truck: camion, chariot
        pipe: tuyau, canalisation
        pipeline: canalisation, tuyau
        tube: tube, tuyau
        windmill: moulin
        mill: moulin
        pump: pompe, eolienne
        fan: ventilateur
        tree: arbre
        oak: chene
        pine: pin
        fir: sapin
        conifer: conifere
        bush: buisson
        shrub: arbuste
        hedge: haie
        boulder: rocher
        rock: rocher, roche, pierre
        stone: pierre
        pebble: caillou, galet
        log: buche, rondin, tronc
        trunk: tronc
        timber: bois
        stump: souche
        flowerbed: parterre, massif
        planter: jardiniere, bac
        flower: fleur
        reed: roseau
        rush: jonc
        cattail: massette
    """),
)

SPANISH = Lexicon(
    "es",
    compounds=False,
    terms=_table("""
        missing_support: flot, en el aire, suspendid, levit, sin apoyo, sin soporte, no toca, sobre el suelo, hueco, en vilo
        intersection: interseca, intersec, solap, superpon, atraviesa, uno dentro del otro, fusionad, incrustad, se cruzan
        scale: demasiado grande, demasiado pequen, enorme, diminut, gigante, aplastad, estirad, desproporcion, tamano equivocado, escala
        missing_collision: atravesar, atraviesa, pasar a traves, pasa a traves, a traves de, sin colision, no bloquea, traspasa, traspasable
        unexpected_collision: bloque, pared invisible, barrera invisible, obstaculo invisible, no se puede pasar, atascad, obstru
        abnormal_trajectory: volcad, vuelca, lanzad, sale disparad, rebot, vuela, salio volando, demasiado lejos, violentamente, catapult, propuls
        visibility: ver a traves, visible a traves, transparenta, desaparec, reaparec, invisible, rayos x
        view_dependent: crece, encoge, cambia de tamano, cambia de forma, cambia de color, con la distancia, de cerca, de lejos
        shadow_lighting: sombra, brill, ilumin, resplandec, luminos, no alumbra
        material: material, textura, superficie, material equivocado, de madera, de piedra, de vidrio, de metal
        existence: desaparecid, falta, ausente, aparecid, aparece, volvio, ya no esta, reaparecid
        static_attribute: movid, movio, girad, giro, cambiad, cambio de, otro lugar, otra posicion, desplazad, reubicad
        operational_state: parpade, brusc, repentin, de repente, congelad, demasiado rapido, salta, retras, no responde, se enciende y se apaga
        improper_configuration: al reves, boca abajo, invertid, mirando a la pared, contra la pared, mal colocad, inclinad, torcid, inutilizable
        historical: anacron, modern, fuera de epoca, fuera de lugar, no pertenece, epoca equivocada, de otra epoca, del futuro
    """),
    materials=_table("""
        wood: madera
        metal: metal, metalic, hierro, acero
        stone: piedra
        glass: vidrio, cristal
        fabric: tela
        plastic: plastico
        brick: ladrillo
        concrete: hormigon
        transparent: transparente
        opaque: opaco
    """),
    nouns=_table("""
        chair: silla, sillon
        seat: asiento
        stool: taburete
        table: mesa
        desk: escritorio, pupitre
        bench: banco
        workbench: banco de trabajo, mesa de trabajo
        sofa: sofa
        couch: sofa
        settee: sofa
        bed: cama, parterre
        bookshelf: estanteria, librero
        bookcase: librero, estanteria
        shelf: estante, estanteria, repisa
        shelves: estanteria, estantes
        shelving: estanteria
        rack: estante, estanteria
        cabinet: armario, mueble
        cupboard: armario, alacena
        sideboard: aparador
        stand: soporte, puesto
        television: televisor, television, tele
        tv: televisor, tele
        screen: pantalla
        lamp: lampara
        light: lampara, farol, farola
        plant: planta
        houseplant: planta
        bottle: botella
        drink: bebida, refresco
        wall: pared, muro
        door: puerta
        doorway: puerta, entrada
        window: ventana
        windowpane: cristal, vidrio
        column: columna
        pillar: pilar, columna
        post: poste
        fence: valla, cerca
        railing: barandilla, baranda
        well: pozo
        pond: estanque, charca
        pool: estanque, piscina
        water: agua
        barrel: barril, tonel
        cask: tonel, barrica
        keg: barril
        sack: saco
        bag: bolsa, saco
        crate: caja, cajon
        box: caja
        basket: cesta, canasta
        bale: fardo, paca
        hay: heno, paja
        bin: cubo, contenedor, papelera
        can: cubo, lata
        dumpster: contenedor
        skip: contenedor
        container: contenedor
        drum: bidon, barril
        pallet: palet, tarima
        skid: palet
        lantern: farol, linterna
        torch: antorcha
        brazier: brasero
        lamppost: farola
        streetlight: farola
        mailbox: buzon
        postbox: buzon
        letterbox: buzon
        bollard: bolardo, pilona
        cone: cono
        pylon: cono
        bumper: tope
        stop: tope
        buffer: tope
        poster: cartel, poster
        board: tablero, panel
        billboard: valla publicitaria, cartel
        sign: senal, letrero, cartel
        signpost: poste indicador, senal
        fingerpost: poste indicador
        hydrant: hidrante, boca de incendios
        stall: puesto, tenderete
        booth: puesto, caseta
        cart: carro, carreta, carretilla
        handcart: carretilla
        wagon: carreta, carro
        car: coche, auto, carro
        automobile: automovil, coche
        vehicle: vehiculo
        hatchback: coche
        forklift: carretilla elevadora, montacargas, carretilla
        truck: camion, carretilla
        pipe: tubo, tuberia
        pipeline: tuberia
        tube: tubo
        windmill: molino
        mill: molino
        pump: bomba
        fan: ventilador
        tree: arbol
        oak: roble
        pine: pino
        fir: abeto
        conifer: conifera
        bush: arbusto
        shrub: arbusto
        hedge: seto
        boulder: roca, pedrusco
        rock: roca, piedra
        stone: piedra
        pebble: guijarro
        log: tronco
        trunk: tronco
        timber: madera
        stump: tocon
        flowerbed: parterre, arriate
        planter: jardinera, macetero
        flower: flor
        reed: junco, carrizo
        rush: junco
        cattail: espadana
    """),
)

LEXICONS = {lex.code: lex for lex in (GERMAN, FRENCH, SPANISH)}
