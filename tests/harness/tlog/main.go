// Command tlogcheck verifies Custodia's audit-log checkpoints and proofs with the
// transparency-log ecosystem's reference libraries, never with Custodia's own code:
//
//	tlogcheck -key VKEY -checkpoint FILE                     a C2SP signed checkpoint
//	tlogcheck -key VKEY -proof FILE.tlog-proof [-entry FILE] an inclusion proof (c2sp.org/tlog-proof@v1)
//	tlogcheck -key VKEY -consistency FILE -from OLD -to NEW  a consistency proof (one base64 hash a line)
//
// It prints "OK ..." and exits 0, or prints the reason and exits 1 (2: bad usage).
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
)

func fail(format string, args ...any) {
	fmt.Printf("FAILED "+format+"\n", args...)
	os.Exit(1)
}

func read(path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return data
}

// checkpoint opens a signed checkpoint with the verifier key; the origin is the key's name.
func checkpoint(data []byte, verifier note.Verifier) *log.Checkpoint {
	cp, _, _, err := log.ParseCheckpoint(data, verifier.Name(), verifier)
	if err != nil {
		fail("checkpoint: %v", err)
	}
	return cp
}

// parseTLogProof reads c2sp.org/tlog-proof@v1: header, optional extra, index, hashes, blank, checkpoint.
func parseTLogProof(data []byte) (extra []byte, index uint64, hashes [][]byte, cp []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	if !sc.Scan() || sc.Text() != "c2sp.org/tlog-proof@v1" {
		fail("proof: missing the c2sp.org/tlog-proof@v1 header")
	}
	sc.Scan()
	if e, ok := strings.CutPrefix(sc.Text(), "extra "); ok {
		var err error
		if extra, err = base64.StdEncoding.DecodeString(e); err != nil {
			fail("proof: extra is not base64: %v", err)
		}
		sc.Scan()
	}
	idx, ok := strings.CutPrefix(sc.Text(), "index ")
	if !ok {
		fail("proof: no index line")
	}
	index, err := strconv.ParseUint(idx, 10, 64)
	if err != nil {
		fail("proof: index: %v", err)
	}
	for sc.Scan() && sc.Text() != "" {
		h, err := base64.StdEncoding.DecodeString(sc.Text())
		if err != nil || len(h) != 32 {
			fail("proof: a hash is not 32 bytes of base64")
		}
		hashes = append(hashes, h)
	}
	for sc.Scan() {
		cp = append(cp, sc.Bytes()...)
		cp = append(cp, '\n')
	}
	return extra, index, hashes, cp
}

func main() {
	key := flag.String("key", "", "note verifier key (name+hash+base64)")
	cpFile := flag.String("checkpoint", "", "a signed checkpoint")
	proofFile := flag.String("proof", "", "a c2sp.org/tlog-proof@v1 file")
	entryFile := flag.String("entry", "", "the record's text (default: the proof's extra)")
	consFile := flag.String("consistency", "", "a consistency proof file")
	from := flag.String("from", "", "the older checkpoint")
	to := flag.String("to", "", "the newer checkpoint")
	flag.Parse()
	if *key == "" {
		fmt.Fprintln(os.Stderr, "usage: tlogcheck -key VKEY (-checkpoint F | -proof F | -consistency F -from OLD -to NEW)")
		os.Exit(2)
	}
	verifier, err := note.NewVerifier(strings.TrimSpace(*key))
	if err != nil {
		fail("key: %v", err)
	}
	hasher := rfc6962.DefaultHasher
	switch {
	case *cpFile != "":
		cp := checkpoint(read(*cpFile), verifier)
		fmt.Printf("OK checkpoint %s size %d root %x\n", cp.Origin, cp.Size, cp.Hash)
	case *proofFile != "":
		extra, index, hashes, cpText := parseTLogProof(read(*proofFile))
		cp := checkpoint(cpText, verifier)
		entry := extra
		if *entryFile != "" {
			entry = bytes.TrimSuffix(read(*entryFile), []byte("\n"))
		}
		if entry == nil {
			fail("proof: no entry (give -entry)")
		}
		leaf := hasher.HashLeaf(entry)
		if err := proof.VerifyInclusion(hasher, index, cp.Size, leaf, hashes, cp.Hash); err != nil {
			fail("inclusion: %v", err)
		}
		fmt.Printf("OK inclusion of leaf %d in %s size %d\n", index, cp.Origin, cp.Size)
	case *consFile != "":
		if *from == "" || *to == "" {
			fmt.Fprintln(os.Stderr, "-consistency needs -from and -to")
			os.Exit(2)
		}
		old := checkpoint(read(*from), verifier)
		new := checkpoint(read(*to), verifier)
		var hashes [][]byte
		for _, line := range strings.Split(strings.TrimSpace(string(read(*consFile))), "\n") {
			if line == "" {
				continue
			}
			h, err := base64.StdEncoding.DecodeString(line)
			if err != nil || len(h) != 32 {
				fail("consistency: a hash is not 32 bytes of base64")
			}
			hashes = append(hashes, h)
		}
		if err := proof.VerifyConsistency(hasher, old.Size, new.Size, hashes, old.Hash, new.Hash); err != nil {
			fail("consistency: %v", err)
		}
		fmt.Printf("OK consistency %d -> %d of %s\n", old.Size, new.Size, new.Origin)
	default:
		fmt.Fprintln(os.Stderr, "give -checkpoint, -proof or -consistency")
		os.Exit(2)
	}
}
