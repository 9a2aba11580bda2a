package bson

import (
	"testing"
)

// FuzzDecimal128 checks ParseDecimal128 against the math/big reference on
// arbitrary strings, and String against ParseDecimal128 on arbitrary bits.
func FuzzDecimal128(f *testing.F) {
	seeds := []struct {
		s    string
		h, l uint64
	}{
		{"1.5", 0x3040000000000000, 15},
		{"-0.000001234E-6170", 0x7C00000000000000, 1},
		{"1E+6144", 0xF800000000000000, 0},
		{"10E-6177", 0x6C11FFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF},
		{"-infINITY", 0x3041ED09BEAD87C0, 0x378D8E6400000000},
		{"12345678901234567890123456789012340E+6111", 0x5FFFED09BEAD87C0, 0x378D8E63FFFFFFFF},
		{".e1", 0, 0},
	}
	for _, s := range seeds {
		f.Add(s.s, s.h, s.l)
	}
	f.Fuzz(func(t *testing.T, s string, h, l uint64) {
		// Strings: never a panic, the reference's verdict, a typed error,
		// and an accepted value's String parses back to the same bits.
		d, err := ParseDecimal128(s)
		if rerr := dec128CheckReference(s, d, err); rerr != nil {
			t.Fatalf("ParseDecimal128(%q): %v", s, rerr)
		}
		if err == nil {
			str := d.String()
			back, err := ParseDecimal128(str)
			if err != nil || back != d {
				t.Fatalf("ParseDecimal128(%q) = %s (%s), which parses back to %s, %v", s, str, dec128Bytes(d), dec128Bytes(back), err)
			}
		}

		// Bits: every value formats to a string that parses back to the
		// value's canonical form and so to the same string.
		x := NewDecimal128(h, l)
		str := x.String()
		if got := string(x.AppendString([]byte("#"))); got != "#"+str {
			t.Fatalf("AppendString = %q, String = %q", got, str)
		}
		y, err := ParseDecimal128(str)
		if err != nil {
			t.Fatalf("String() of %s is %q, which does not parse: %v", dec128Bytes(x), str, err)
		}
		if y.String() != str {
			t.Fatalf("String() of %s is %q, which parses to %q", dec128Bytes(x), str, y.String())
		}
		switch {
		case x.IsNaN():
			if y != NewDecimal128(0x7C00000000000000, 0) {
				t.Fatalf("NaN %s parses back to %s", dec128Bytes(x), dec128Bytes(y))
			}
		case x.IsInf() != 0:
			if y.IsInf() != x.IsInf() || y.h&^(1<<63) != 0x7800000000000000 || y.l != 0 {
				t.Fatalf("infinity %s parses back to %s", dec128Bytes(x), dec128Bytes(y))
			}
		case x.IsZero():
			// A non-canonical coefficient reads as zero; sign and exponent
			// are kept.
			_, xe, _ := x.BigInt()
			_, ye, _ := y.BigInt()
			if !y.IsZero() || xe != ye || (x.h>>63) != (y.h>>63) {
				t.Fatalf("zero %s (%s) parses back to %s", dec128Bytes(x), str, dec128Bytes(y))
			}
			if x.h&(3<<61) != 3<<61 && x.l == 0 && x.h&(1<<49-1) == 0 && y != x {
				t.Fatalf("canonical zero %s parses back to %s", dec128Bytes(x), dec128Bytes(y))
			}
		default:
			if y != x {
				t.Fatalf("%s (%s) parses back to %s", dec128Bytes(x), str, dec128Bytes(y))
			}
		}
		if txt, err := x.MarshalText(); err != nil || string(txt) != str {
			t.Fatalf("MarshalText = %q, %v; want %q", txt, err, str)
		}
		var z Decimal128
		if err := z.UnmarshalText([]byte(str)); err != nil || z != y {
			t.Fatalf("UnmarshalText(%q) = %s, %v; want %s", str, dec128Bytes(z), err, dec128Bytes(y))
		}
	})
}
