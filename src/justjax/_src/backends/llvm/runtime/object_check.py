"""A structural check of object code read from the disk cache, before LLVM loads it.

LLVM's loader (RuntimeDyld) trusts the object files it is given: a section table that points
past the file, a symbol or relocation that names a section or symbol that is not there, or a
relocation type it does not implement makes it read out of bounds or abort the process. The
cache's checksum catches accidental damage; an entry altered with its checksum recomputed
must still be refused rather than crash. `problem(obj, symbols)` checks what the loader
relies on: the ELF header (64-bit, little-endian, relocatable, for this machine), every
section within the file, the symbol and string tables and their cross-references, every
relocation's symbol, target and (on x86-64) type, and that the program's entry symbols are
defined. It does not judge the machine code itself: whoever can write the cache folder can
run code in the processes that read it (the README's trust model), as with JAX's cache.
"""
from __future__ import annotations

import struct
from typing import Iterable

import llvmlite.binding as llvm

__all__ = ["problem"]

_ELF_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
_SHT_NOBITS, _SHT_SYMTAB, _SHT_STRTAB, _SHT_RELA, _SHT_REL = 8, 2, 3, 4, 9
_SHN_LORESERVE = 0xFF00
_MACHINES = {"x86_64": 62, "aarch64": 183, "arm64": 183}
# Bounds on what the loader allocates for a section (a program's zeroed data is small; its
# alignments are at most a page's).
_MAX_ZEROED_BYTES = 1 << 28
_MAX_ALIGNMENT = 1 << 16
_SHF_TLS = 0x400
# The section kinds LLVM gives a program's object (null, code and data, symbol and string
# tables, RELA relocations, notes, zeroed data, init/fini arrays, x86-64 unwind tables, LLVM's
# address-significance table); others (groups, extended section indices) the loader handles
# only as their own rules say.
_SECTION_KINDS = frozenset({0, 1, 2, 3, 4, 7, 8, 14, 15, 0x70000001, 0x6FFF4C03})
# Symbol types and bindings the loader handles: no type, object, function, section, file;
# local, global, weak (thread-local and indirect functions it cannot).
_SYMBOL_TYPES = frozenset({0, 1, 2, 3, 4})
_SYMBOL_BINDINGS = frozenset({0, 1, 2})
# Those a relocation may refer to (a file symbol the loader cannot resolve).
_RELOCATED_SYMBOL_TYPES = frozenset({0, 1, 2, 3})
# The x86-64 relocation types RuntimeDyldELF implements (it aborts on others): 64, PC32,
# PLT32, GOTPCREL, 32, 32S, PC64, GOTOFF64, GOTPC32, GOTPC64, GOTPCRELX, REX_GOTPCRELX
# (LLVM emits 64 and PC64 in the large code model the backend uses).
_X86_64_RELOCATIONS = frozenset({0, 1, 2, 4, 9, 10, 11, 24, 25, 26, 29, 41, 42})


def problem(obj: bytes, symbols: Iterable[str] = ("entry",)) -> str:
    """What makes `obj` unsafe to give LLVM's loader, or "" when it checks out.

    Args:
      obj: the bytes of an ELF relocatable object.
      symbols: names that must be defined in it (the entry points called by address).
    """
    try:
        return _problem(memoryview(obj), tuple(symbols))
    except struct.error as e:
        return f"malformed object code ({e})"


def _problem(data: memoryview, symbols: tuple[str, ...]) -> str:
    if len(data) < _ELF_HEADER.size:
        return "object code shorter than an ELF header"
    (ident, e_type, e_machine, _, _, _, shoff, _, ehsize, _, _, shentsize, shnum,
     shstrndx) = _ELF_HEADER.unpack_from(data)
    if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        return "not a 64-bit little-endian ELF object"
    if e_type != 1:
        return f"ELF type {e_type}, not a relocatable object"
    machine = _MACHINES.get(llvm.get_process_triple().split("-")[0])
    if machine is not None and e_machine != machine:
        return f"ELF machine {e_machine}, not this host's ({machine})"
    if ehsize != _ELF_HEADER.size or shentsize != _SECTION.size:
        return "unexpected ELF header or section entry size"
    if shnum == 0 or shoff + shnum * _SECTION.size > len(data) or shstrndx >= shnum:
        return "section table out of bounds"
    sections = [_SECTION.unpack_from(data, shoff + i * _SECTION.size) for i in range(shnum)]
    names = sections[shstrndx]
    if names[1] != _SHT_STRTAB or names[4] + names[5] > len(data) or \
            not _is_string_table(data, names):
        return "section names not in a string table"
    if any(section[0] >= names[5] for section in sections):
        return "a section's name out of bounds"
    if sections[0][1] != 0:
        return "section 0 is not the null section"
    for index, (_, kind, flags, _, offset, size, link, _, align, _) in enumerate(sections):
        if kind not in _SECTION_KINDS:
            return f"section {index} of a kind LLVM's programs do not have ({kind:#x})"
        if kind != _SHT_NOBITS and offset + size > len(data):
            return f"section {index} out of bounds"
        if flags & _SHF_TLS:
            return f"section {index} of thread-local data (which the loader cannot place)"
        if kind == _SHT_NOBITS and size > _MAX_ZEROED_BYTES:
            return f"section {index} asks for {size} bytes of zeros"
        if align & (align - 1) or align > _MAX_ALIGNMENT:
            return f"section {index} has an alignment of {align}"
        if kind in (_SHT_SYMTAB, _SHT_RELA, _SHT_REL) and link >= shnum:
            return f"section {index} links to a section that is not there"
    found = set()
    for index, section in enumerate(sections):
        kind = section[1]
        if kind == _SHT_SYMTAB:
            why = _check_symbols(data, sections, section, found)
        elif kind in (_SHT_RELA, _SHT_REL):
            why = _check_relocations(data, sections, section, machine)
        elif kind == _SHT_STRTAB:
            why = "" if _is_string_table(data, section) else "string table not NUL-terminated"
        else:
            why = ""
        if why:
            return f"section {index}: {why}"
    missing = [s for s in symbols if s not in found]
    if missing:
        return f"entry symbol {missing[0]!r} not defined"
    return ""


def _is_string_table(data: memoryview, section: tuple) -> bool:
    offset, size = section[4], section[5]
    return size == 0 or data[offset + size - 1] == 0


def _check_symbols(data: memoryview, sections: list[tuple], symtab: tuple,
                   defined: set[str]) -> str:
    _, _, _, _, offset, size, link, _, _, entsize = symtab
    if entsize != _SYMBOL.size or size % _SYMBOL.size:
        return "symbol table entries of an unexpected size"
    strings = sections[link]
    if strings[1] != _SHT_STRTAB or not _is_string_table(data, strings):
        return "symbol names not in a string table"
    names = bytes(data[strings[4]:strings[4] + strings[5]])
    for k in range(size // _SYMBOL.size):
        name, info, _, shndx, value, _ = _SYMBOL.unpack_from(data, offset + k * _SYMBOL.size)
        if name >= max(len(names), 1):
            return f"symbol {k}'s name out of bounds"
        if info & 0xF not in _SYMBOL_TYPES or info >> 4 not in _SYMBOL_BINDINGS:
            return f"symbol {k} of a type or binding the loader does not handle"
        if shndx >= len(sections) and shndx < _SHN_LORESERVE:
            return f"symbol {k} in a section that is not there"
        if 0 < shndx < len(sections) and value > sections[shndx][5]:
            return f"symbol {k} past the end of its section"
        if shndx != 0:
            defined.add(names[name:names.index(b"\0", name)].decode(errors="replace"))
    return ""


def _check_relocations(data: memoryview, sections: list[tuple], table: tuple,
                       machine: int | None) -> str:
    _, kind, _, _, offset, size, link, info, _, entsize = table
    if kind == _SHT_REL:
        return "REL relocations (LLVM emits RELA on this host)"
    if entsize != _RELA.size or size % _RELA.size:
        return "relocation entries of an unexpected size"
    symtab = sections[link]
    if symtab[1] != _SHT_SYMTAB or info >= len(sections):
        return "relocations of a section or symbol table that is not there"
    symbol_count = symtab[5] // _SYMBOL.size
    target_size = sections[info][5]
    for k in range(size // _RELA.size):
        r_offset, r_info, _ = _RELA.unpack_from(data, offset + k * _RELA.size)
        symbol = r_info >> 32
        if symbol >= symbol_count:
            return f"relocation {k} names a symbol that is not there"
        if data[symtab[4] + symbol * _SYMBOL.size + 4] & 0xF not in _RELOCATED_SYMBOL_TYPES:
            return f"relocation {k} against a symbol of a type the loader cannot resolve"
        if r_offset >= target_size:
            return f"relocation {k} outside its section"
        if machine == 62 and (r_info & 0xFFFFFFFF) not in _X86_64_RELOCATIONS:
            return f"relocation {k} of a type the loader does not implement"
    return ""
