"""Just enough of an ELF reader for the engine's builds (tests/test_wheel.py, tests/test_engine_hosts.py):
64-bit little-endian files (x86_64, aarch64), read with struct, since `file` and readelf may be absent.
Layouts: the System V gABI (elf(5)); FreeBSD's ABI note: sys/elf_common.h NT_FREEBSD_ABI_TAG."""

import struct
from dataclasses import dataclass
from typing import Dict, List, Tuple

ELFOSABI_FREEBSD = 9
EM_X86_64, EM_AARCH64 = 62, 183
PT_DYNAMIC, PT_INTERP = 2, 3
SHN_UNDEF = 0
NT_FREEBSD_ABI_TAG = 1  # .note.tag, owner "FreeBSD": __FreeBSD_version the binary was built for


@dataclass
class Section:
    name: str
    type: int
    offset: int
    size: int
    link: int


class Elf:
    def __init__(self, path: str):
        with open(path, "rb") as fh:
            self.data = fh.read()
        ident = self.data[:16]
        if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
            raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
        self.osabi = ident[7]
        (_, self.type, self.machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum,
         shstrndx) = struct.unpack_from("<16sHHIQQQIHHHHHH", self.data)
        self.segments = [struct.unpack_from("<IIQQQQQQ", self.data, phoff + i * phentsize) for i in range(phnum)]
        raw = [struct.unpack_from("<IIQQQQIIQQ", self.data, shoff + i * shentsize) for i in range(shnum)]
        names = raw[shstrndx]
        self.sections: Dict[str, Section] = {}
        self.by_index: List[Section] = []
        for sh_name, sh_type, _, _, offset, size, link, _, _, _ in raw:
            sec = Section(self._string(names[4], sh_name), sh_type, offset, size, link)
            self.by_index.append(sec)
            self.sections.setdefault(sec.name, sec)

    def _string(self, table_offset: int, at: int) -> str:
        start = table_offset + at
        return self.data[start:self.data.index(b"\0", start)].decode()

    def section(self, name: str) -> bytes:
        sec = self.sections[name]
        return self.data[sec.offset:sec.offset + sec.size]

    def segment_types(self) -> List[int]:
        return [seg[0] for seg in self.segments]

    def symbols(self, table: str = ".dynsym") -> List[Tuple[str, bool, int, int]]:
        """(name, defined, section index, value) of each symbol of ``table`` (.dynsym or .symtab)."""
        if table not in self.sections:
            return []
        sec = self.sections[table]
        strings = self.by_index[sec.link].offset
        out = []
        for at in range(sec.offset, sec.offset + sec.size, 24):
            st_name, _, _, shndx, value, _ = struct.unpack_from("<IBBHQQ", self.data, at)
            if st_name:
                out.append((self._string(strings, st_name), shndx != SHN_UNDEF, shndx, value))
        return out

    def imports(self) -> List[str]:
        """The names the dynamic symbol table needs from shared libraries."""
        return [name for name, defined, _, _ in self.symbols() if not defined]

    def notes(self, name: str) -> List[Tuple[str, int, bytes]]:
        """(owner, type, description) of each note in section ``name``."""
        data, out, at = self.section(name), [], 0
        while at + 12 <= len(data):
            namesz, descsz, kind = struct.unpack_from("<III", data, at)
            at += 12
            owner = data[at:at + namesz].rstrip(b"\0").decode()
            at += (namesz + 3) & ~3
            out.append((owner, kind, data[at:at + descsz]))
            at += (descsz + 3) & ~3
        return out

    def value_of(self, symbol: str, size: int = 8) -> int:
        """The little-endian integer a defined object symbol of an object file (``-c``) holds: its bytes
        in its section (st_value is the offset in the section there)."""
        for name, defined, shndx, value in self.symbols(".symtab"):
            if name == symbol and defined:
                start = self.by_index[shndx].offset + value
                return int.from_bytes(self.data[start:start + size], "little")
        raise KeyError(symbol)

    def loads_constant(self, value: int) -> bool:
        """Whether the code loads the 32-bit ``value`` into a register: as an immediate or a literal (its 4
        bytes in .text or .rodata: x86_64's mov imm32), or on aarch64 as MOVZ #low16 then MOVK #high16,
        LSL #16 into one register (32- or 64-bit forms)."""
        packed = struct.pack("<I", value)
        if any(packed in self.section(s) for s in (".text", ".rodata") if s in self.sections):
            return True
        if self.machine != EM_AARCH64:
            return False
        text = self.section(".text")
        words = struct.unpack_from(f"<{len(text) // 4}I", text)
        movz = 0x52800000 | (value & 0xFFFF) << 5  # hw = 0
        movk = 0x72A00000 | (value >> 16 & 0xFFFF) << 5  # hw = 1: LSL #16
        low = {w & 0x1F for w in words if w & 0x7FFFFFE0 == movz}  # bit 31 (sf) and Rd masked
        high = {w & 0x1F for w in words if w & 0x7FFFFFE0 == movk}
        return bool(low & high)
